with

task_lines as (

    select * from {{ ref('int_task_lines_read') }}

),

kilt_datasets as (

    select * from {{ ref('kilt_tasks') }}

),

tasks as (

    select distinct task

    from task_lines

),

labelled as (

    -- `nq-dev-kilt` is dataset `nq`; a task file of no KILT dataset keeps
    -- its own name and no family.
    select
        tasks.task,
        coalesce(kilt_datasets.dataset, tasks.task) as dataset,
        kilt_datasets.dataset_name,
        kilt_datasets.task_family,
        kilt_datasets.has_span_offsets,
        kilt_datasets.dataset is not null as is_kilt_dataset

    from tasks

    left join kilt_datasets
        on split_part(tasks.task, '-', 1) = kilt_datasets.dataset

)

select * from labelled
