import asyncio
from roseinfer import EngineClient, LLMEngine, SamplingParams
from roseinfer.loader import load_model
from roseinfer.config import EngineConfig

config = EngineConfig(model="/tmp/s47/audit/tinysmol", dtype="float32")
loaded = load_model(config)
client = EngineClient(LLMEngine(loaded, config))  # starts the engine thread

async def main() -> None:
    ids = loaded.tokenizer.encode_chat([{"role": "user", "content": "Hi!"}])
    async for out in client.generate("req-1", ids, SamplingParams(max_tokens=5)):
        print(repr(out.outputs[0].text))  # all the text so far
asyncio.run(main())
client.shutdown()
from roseinfer.config import LOAD_FIELDS; print(LOAD_FIELDS)
