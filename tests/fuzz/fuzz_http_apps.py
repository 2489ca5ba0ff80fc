"""A small HTTP server of the tests' own: any Python implementation behind ``POST /{operation}``.

The same protocol as ``envfactory serve`` for native contracts (JSON body in, JSON out, the error
status on a rejected call, ``POST /_envfactory/reset`` for a fresh state), so that a planted bug
in an implementation becomes a planted bug in an HTTP API.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from envfactory.server import running


def http_app(factory: Callable[[], Any]) -> Starlette:
    holder = {"obj": factory()}

    async def reset(request: Request) -> Response:
        holder["obj"] = factory()
        return JSONResponse({"reset": True})

    async def call(request: Request) -> Response:
        name = request.path_params["operation"]
        method = getattr(holder["obj"], name, None)
        if method is None or name.startswith("_"):
            return JSONResponse({"error": "no such operation"}, status_code=404)
        try:
            body = json.loads(await request.body() or b"{}")
        except ValueError:
            return JSONResponse({"error": "bad json"}, status_code=400)
        if not isinstance(body, dict):
            return JSONResponse({"error": "the body must be an object"}, status_code=422)
        try:
            result = method(**body)
        except TypeError as err:
            return JSONResponse({"error": str(err)}, status_code=422)
        except Exception as err:
            status = getattr(err, "status", None)
            if isinstance(status, int):
                return JSONResponse({"error": str(err)}, status_code=status)
            return JSONResponse({"error": "internal server error"}, status_code=500)
        return JSONResponse(result)

    return Starlette(
        routes=[
            Route("/_envfactory/reset", reset, methods=["POST"]),
            Route("/{operation}", call, methods=["POST"]),
        ]
    )


def serving(app: Any) -> Any:
    """uvicorn in a background thread on a free loopback port; yields the base URL."""
    return running(app)
