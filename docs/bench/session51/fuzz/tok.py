from roseinfer.loader import load_model
from roseinfer.config import EngineConfig
from roseinfer.tokenizer import Tokenizer
import json
c=json.load(open("/tmp/s47/audit/tinysmol/tokenizer_config.json"))
print({k:v for k,v in c.items() if k!="added_tokens_decoder" and k!="chat_template"})
print(list(c.get("added_tokens_decoder",{}).items())[:20])
