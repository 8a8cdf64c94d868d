"""Stage 1b, published benchmarks: adapters that read a benchmark from the user's own checkout at run time and
turn it into a Suite of tasks (`registry.load_suite("ADAPTER:PATH")`) plus FastMCP servers built fresh for every
run (`registry.build_server`). Nothing of a benchmark is copied into this repository."""
