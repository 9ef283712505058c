"""Generated from protos/herald/v1 by `make protos`."""
