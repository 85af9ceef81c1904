{% test expression_is_true(model, expression) %}

-- Rows where the expression is false or NULL.
select * from {{ model }}

where not coalesce(({{ expression }}), false)

{% endtest %}
