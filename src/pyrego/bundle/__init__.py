"""OPA bundles: reading and inspecting them."""
