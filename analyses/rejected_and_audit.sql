-- What the last build read, kept and rejected.
select * from {{ ref('kilt_load_audit') }}
