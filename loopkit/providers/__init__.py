"""Provider adapters, one module per wire protocol: a pure codec plus a thin httpx Provider."""
