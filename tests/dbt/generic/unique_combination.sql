{% test unique_combination(model, columns) %}

-- Combinations of the columns that occur more than once.
select {{ columns | join(', ') }}, count(*) as num_rows

from {{ model }}

group by {{ columns | join(', ') }}

having count(*) > 1

{% endtest %}
