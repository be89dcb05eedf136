"""pyrego in a Python service: the decisions an OPA server would make, in process.

- :mod:`pyrego.integrations.asgi`: a middleware checking every request
  (Starlette, FastAPI, any ASGI app);
- :mod:`pyrego.integrations.fastapi`: a dependency checking one route
  (``Depends(PolicyGuard(engine, "data.app.allow"))``);
- :mod:`pyrego.integrations.django`: a middleware and a view decorator;
- :mod:`pyrego.integrations.reload`: policies from a folder, reloaded on
  demand with the engine swapped whole;
- :mod:`pyrego.integrations.decisions`: the input document of a request and
  how a rule's value reads as a decision (shared by all of them).

Each framework is imported only by its own module; this package imports none.
See docs/integrations.md.
"""
