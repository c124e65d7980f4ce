"""OpenAI-style errors: `{"error": {"message", "type", "param", "code"}}` for every failure."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from roseinfer.outputs import RequestFailed
from roseinfer.server.protocol import error_body

ModelT = TypeVar("ModelT", bound=BaseModel)

logger = logging.getLogger(__name__)

_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
          405: "invalid_request_error", 413: "invalid_request_error", 503: "server_error"}  # fmt: skip


_TYPE_TAG = re.compile(r"^(str|int|float|bool|none|[\w-]+\[.*\])$")


class APIError(Exception):
    """An error answered to the client as an OpenAI error body."""

    def __init__(
        self,
        status: int,
        message: str,
        param: str | None = None,
        code: str | None = None,
        type_: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.param, self.code = status, message, param, code
        self.type = type_ or _TYPES.get(
            status, "server_error" if status >= 500 else "invalid_request_error"
        )
        self.headers = headers

    def body(self) -> dict:
        return error_body(self.message, self.type, self.param, self.code)

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status, headers=self.headers)


def from_validation_error(
    errors: Sequence[Mapping[str, Any]], what: str = "request body"
) -> APIError:
    """A 400 naming the first offending field (dotted path, e.g. `messages.0.role`)."""
    if not errors:
        return APIError(400, f"invalid {what}")
    err = errors[0]
    # Drop "body" and the union-member tags pydantic adds ("str", "list[int]", ...).
    loc = [str(p) for p in err.get("loc", ()) if p != "body" and not _TYPE_TAG.match(str(p))]
    if err.get("type") == "json_invalid":
        return APIError(400, f"{what} is not valid JSON: {err.get('msg', '')}", code="invalid_json")
    param = ".".join(loc) or None
    message = err.get("msg", "invalid value")
    if err.get("type") == "missing":
        message = f"'{param}' is required"
    elif param:
        message = f"{param}: {message}"
    if len(errors) > 1:
        message += f" (and {len(errors) - 1} more error{'s' if len(errors) > 2 else ''})"
    return APIError(400, message, param=param, code="invalid_value")


def install_error_handlers(
    app: FastAPI, unknown_path_error: Callable[[Request], APIError | None] = lambda _: None
) -> None:
    """The error handlers, all answering in OpenAI's error body. `unknown_path_error`: what a
    404 or 405 answers instead, where it gives an error (the API key check)."""

    @app.exception_handler(APIError)
    async def _api_error(_: Request, exc: APIError) -> JSONResponse:
        return exc.response()

    @app.exception_handler(RequestValidationError)
    async def _request_validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        return from_validation_error(list(exc.errors())).response()

    @app.exception_handler(ValidationError)
    async def _validation(_: Request, exc: ValidationError) -> JSONResponse:
        return from_validation_error(exc.errors()).response()

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code in (404, 405) and (denied := unknown_path_error(request)) is not None:
            return denied.response()
        headers = getattr(exc, "headers", None)
        message = str(exc.detail)
        if exc.status_code in (404, 405):  # which URL, as OpenAI's "Invalid URL (POST /v1/x)"
            message = f"{message}: {request.method} {request.url.path}"
        return APIError(exc.status_code, message, headers=headers).response()

    @app.exception_handler(ClientDisconnect)
    async def _client_gone(request: Request, _: ClientDisconnect) -> Response:
        # The client left while its body was being read: an everyday event, not a server error
        # (the catch-all below would log a traceback). Nobody reads the answer.
        logger.debug("client disconnected while sending %s %s", request.method, request.url.path)
        return Response(status_code=499)

    @app.exception_handler(Exception)
    async def _internal(_: Request, exc: Exception) -> JSONResponse:
        logger.exception("unhandled error while serving a request", exc_info=exc)
        return APIError(500, f"internal server error: {type(exc).__name__}: {exc}").response()


def validated(model: type[ModelT], data: dict) -> ModelT:
    """The body's pydantic model (a 400 naming the first field of the wrong type)."""
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise from_validation_error(e.errors()) from None


def failed_request_error(
    e: RequestFailed, param: str | None = None, work: str = "generation"
) -> APIError:
    """A request the engine failed once it ran: the same error body streamed or not (a stream's
    status is already 200 by then). `param`: the request's constraint field, which such a
    failure of its own doing names (its grammar, or the masks beside it, left no token);
    `work`: what failed ("generation", "embedding")."""
    if e.invalid_request:  # found only once it ran: still the request's doing
        return APIError(400, str(e), param=param, code="invalid_request")
    return APIError(500, f"{work} failed: {e}", code=f"{work}_failed")


def internal_error(e: Exception) -> APIError:
    """A bug while processing one request: it fails alone."""
    return APIError(500, f"internal error: {type(e).__name__}: {e}")
