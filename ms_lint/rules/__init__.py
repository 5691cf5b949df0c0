"""One rule per module. The engine finds every `Rule` subclass defined here; there is no registry to edit."""
