{% test not_blank(model, column_name) %}

-- Rows whose value is empty or only white space (str.isspace() set).
select * from {{ model }}

where {{ column_name }} is not null and {{ is_blank(column_name) }}

{% endtest %}
