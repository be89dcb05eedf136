"""OPA bundles: reading (``reader``), writing (``writer``), signatures (``signing``), activation plans (``activate``), ``opa inspect`` (``inspect``)."""
