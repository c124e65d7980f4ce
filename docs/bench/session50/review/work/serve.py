import json, sys, os
sys.path.insert(0, "/work/main/tests")
from conftest import make_tiny_model
import uvicorn
from roseinfer.config import EngineConfig
from roseinfer.engine import InferenceEngine
from roseinfer.engine.client import EngineClient
from roseinfer.server.app import create_app
from roseinfer.server.cli import uvicorn_config
from roseinfer.server.config import ServerConfig
path = "/tmp/s50/review/work/qwen2"
if not os.path.exists(path + "/config.json"):
    make_tiny_model("qwen2", path)
    with open(f"{path}/config.json") as f:
        config = json.load(f)
    with open(f"{path}/config.json", "w") as f:
        json.dump({**config, "max_position_embeddings": 2048}, f)
port = int(sys.argv[1])
kw = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
ekw = json.loads(sys.argv[3]) if len(sys.argv) > 3 else {}
engine = InferenceEngine(EngineConfig(**{"model": path, "dtype": "float32", "num_kv_blocks": 256, **ekw}))
app = create_app(EngineClient(engine.new_core()), ServerConfig(**kw))
uvicorn.Server(uvicorn_config(app, "127.0.0.1", port, "warning")).run()
