"""The analysis layer: what the rules ask about a module and its project, computed on stdlib `ast` trees."""
