"""What every route module of the server reads: `ServingContext`, built once by `create_app`.

It holds the running `EngineClient`, the server's config and what is resolved from the engine
once (the served names, the tokenizer, the model's sampling defaults), and the checks each
endpoint makes before it submits anything: the body against the field table, the model name,
the engine's own checks and the waiting queue's capacity.
"""

from __future__ import annotations

from fastapi import Request

from roseinfer.engine.client import EngineClient
from roseinfer.engine.requests import InvalidRequestError
from roseinfer.fim import FimTokens, NoFimTokens, fim_tokens
from roseinfer.sampling_params import SamplingParams
from roseinfer.server.body_check import FieldError, check_body
from roseinfer.server.config import ServerConfig
from roseinfer.server.errors import APIError, ModelT, validated
from roseinfer.server.jsonbody import read_request_json
from roseinfer.server.params import ParamsBuilder, engine_error


class ServingContext:
    def __init__(self, client: EngineClient, cfg: ServerConfig) -> None:
        core = client.engine
        self.client, self.cfg = client, cfg
        self.model_names = cfg.served_model_names or (core.model_name,)
        self.model_name = self.model_names[0]  # the name responses carry
        self.tokenizer = core.tokenizer
        self.defaults = core.sampling_defaults  # of a field a request leaves out
        self.max_total_tokens = core.max_total_tokens  # a prompt and its output, at most
        self.max_model_len = core.max_model_len
        self.builder = ParamsBuilder(self.max_total_tokens, core.max_model_len, self.defaults)
        self._fim: FimTokens | str | None = None  # (str: why there are none)

    async def checked_body(self, request: Request, endpoint: str) -> dict:
        """The body's honoured fields (the field table: unknown or refused -> 400)."""
        data = await read_request_json(request)
        try:
            return check_body(data, endpoint)
        except FieldError as e:
            raise e.api_error() from None

    async def parse(self, request: Request, model: type[ModelT], endpoint: str) -> ModelT:
        return validated(model, await self.checked_body(request, endpoint))

    def fim_tokens(self) -> FimTokens:
        """The model's FIM tokens (NoFimTokens where it has none), found once."""
        if self._fim is None:
            try:
                self._fim = fim_tokens(self.tokenizer)
            except NoFimTokens as e:
                self._fim = str(e)  # (the text: an exception kept would keep its traceback)
        if isinstance(self._fim, str):
            raise NoFimTokens(self._fim)
        return self._fim

    def check_model(self, name: str | None) -> None:
        """A 404 for a model this server does not serve; "" names none, as left out (vLLM's)."""
        if name and name not in self.model_names:
            served = ", ".join(f"`{n}`" for n in self.model_names)
            raise APIError(404, f"The model `{name}` does not exist (this server serves "
                                f"{served}).", param="model", code="model_not_found")  # fmt: skip

    def check_capacity(self, num_new: int = 1) -> None:
        """503 where the `num_new` engine requests this one adds (prompts x n, inputs) would
        take the waiting past --max-waiting-requests; into an empty queue a request of more
        is taken whole (else it could never run)."""
        if not self.client.is_alive():
            raise APIError(503, "the engine is not running", code="engine_dead")
        limit = self.cfg.max_waiting_requests
        waiting = self.client.num_waiting
        if limit is not None and (waiting >= limit or (waiting and waiting + num_new > limit)):
            adds = f", and this request adds {num_new}" if num_new > 1 else ""
            raise APIError(503, f"server overloaded: {waiting} requests are waiting{adds} "
                                f"(limit {limit})", code="server_overloaded",
                           headers={"Retry-After": "1"})  # fmt: skip

    def submit_checks(
        self, requests: list[tuple[list[int], SamplingParams]], names: dict[str, str]
    ) -> None:
        """The engine's checks; a refusal names the field as the request sent it (`names`)."""
        for ids, params in requests:
            try:
                self.client.validate(ids, params)
            except InvalidRequestError as e:
                raise engine_error(e, names) from None
        self.check_capacity(sum(params.n for _, params in requests))
