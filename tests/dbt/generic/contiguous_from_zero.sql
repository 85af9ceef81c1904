{% test contiguous_from_zero(model, column_name, partition_by) %}

-- Groups whose values are not exactly 0, 1, ..., n-1.
with

grouped as (

    select
        {{ partition_by }},
        min({{ column_name }}) as min_value,
        max({{ column_name }}) as max_value,
        count(*) as num_rows,
        count(distinct {{ column_name }}) as num_distinct

    from {{ model }}

    group by {{ partition_by }}

)

select * from grouped

where min_value <> 0 or max_value <> num_rows - 1 or num_distinct <> num_rows

{% endtest %}
