{% macro drop_after_reload(record) -%}
    {#- Post-hook of base_kilt__pages: after a fresh load (not a reused one),
        drops the incremental tables built from an earlier load, through the
        adapter so that dbt's relation cache knows, and they are built anew
        from the new pages. A reused load keeps them: a rerun after a killed
        build does not cut the sections or measure the paragraphs again.
        Which tables: every incremental model downstream of this one in
        dbt's graph (its refs, followed to the end), so a new incremental
        model needs no list here; a model that checks a reload itself says so
        with `meta: {kept_after_reload: true}` (int_sections_chunked: its
        checkpoint compares section fingerprints). -#}
    {%- if execute -%}
        {%- set reused = run_query('select is_reused from ' ~ record) -%}
        {%- if not reused.columns[0].values()[0] -%}
            {%- for node in models_built_from(model.unique_id) -%}
                {%- if node.config.materialized == 'incremental'
                    and not node.config.get('meta', {}).get('kept_after_reload', false) -%}
                    {%- set relation = adapter.get_relation(
                        node.database, node.schema, node.alias
                    ) -%}
                    {%- if relation is not none -%}
                        {%- do adapter.drop_relation(relation) -%}
                    {%- endif -%}
                {%- endif -%}
            {%- endfor -%}
        {%- endif -%}
    {%- endif -%}
    select 1
{%- endmacro %}


{% macro models_built_from(unique_id, upstream=false) -%}
    {#- The model nodes downstream of node unique_id in dbt's graph (through
        any depth of refs), or upstream of it (the models it is built from)
        with upstream=true, in no particular order; unique_id itself is not
        among them. -#}
    {%- set models = graph.nodes.values()
        | selectattr('resource_type', 'equalto', 'model') | list -%}
    {%- set found = namespace(ids=[unique_id], grew=true, refs=[]) -%}
    {%- for _ in models if found.grew -%}
        {%- set found.grew = false -%}
        {%- set found.refs = [] -%}
        {%- for id in found.ids if upstream -%}
            {%- set found.refs = found.refs + graph.nodes[id].depends_on.nodes -%}
        {%- endfor -%}
        {%- for node in models if node.unique_id not in found.ids -%}
            {%- if (upstream and node.unique_id in found.refs)
                or (not upstream
                    and node.depends_on.nodes | select('in', found.ids) | list) -%}
                {%- set found.ids = found.ids + [node.unique_id] -%}
                {%- set found.grew = true -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endfor -%}
    {{- return(models | selectattr('unique_id', 'in', found.ids[1:]) | list) -}}
{%- endmacro %}
