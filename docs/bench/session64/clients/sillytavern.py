"""SillyTavern (SillyTavern/SillyTavern), default settings.

Text completion: public/scripts/textgen-settings.js createTextGenGenerationData()
(defaults: the `textgenerationwebui_settings` object of the same file; LLAMACPP_DEFAULT_ORDER),
forwarded by src/endpoints/backends/text-completions.js `/generate`:
  - llama.cpp type  -> POST {server}/completion with the WHOLE body (no key filter)
  - vLLM type       -> POST {server}/v1/completions, body filtered by VLLM_KEYS (src/constants.js)
  - Generic type    -> POST {server}/v1/completions, filtered by OPENAI_KEYS, stop cut to 4
  - ooba / TabbyAPI / KoboldCpp types -> POST {server}/v1/completions with the WHOLE body
Chat completion, "Custom (OpenAI-compatible)" source: src/endpoints/backends/chat-completions.js
  requestBody {messages, model, temperature, max_tokens, max_completion_tokens, stream,
  presence_penalty, frequency_penalty, top_p, top_k, stop, logit_bias, seed, n, ...bodyParams}
  (defaults from public/scripts/openai.js: temp 1, max_tokens 300 -> here 16, top_p 1, penalties 0).
max_tokens / n_predict etc. are cut from ST's 350 (amount_gen default) to 16: same fields, same types.
"""
from _common import peel, reset, MODEL, MSGS

C = "sillytavern"
import sys
if "--append" not in sys.argv: reset(C)
SRC_TC = "SillyTavern public/scripts/textgen-settings.js createTextGenGenerationData + src/endpoints/backends/text-completions.js"
PROMPT = ("You are Seraphina.\n\n### Instruction:\nUser: Hello!\n\n### Response:\nSeraphina:")
STOPS = ["\nUser:", "\n### Instruction:", "\nSeraphina:"]
N = 16
LLAMACPP_ORDER = ['penalties', 'dry', 'top_n_sigma', 'top_k', 'typ_p', 'top_p', 'min_p', 'xtc', 'temperature', 'adaptive_p']


def base_params(api_type):
    # `params` object, JSON.stringify drops undefined values and the parseSequenceBreakers function
    return {
        'prompt': PROMPT,
        'max_new_tokens': N, 'max_tokens': N,
        'temperature': 0.7, 'top_p': 0.5, 'typical_p': 1, 'typical': 1,
        'min_p': 0, 'repetition_penalty': 1.2, 'frequency_penalty': 0, 'presence_penalty': 0,
        'top_k': 40, 'skew': 0, 'min_tokens': 0, 'add_bos_token': True,
        'smoothing_factor': 0.0, 'smoothing_curve': 1.0,
        'dry_allowed_length': 2, 'dry_multiplier': 0.0, 'dry_base': 1.75,
        'dry_sequence_breakers': '["\\n", ":", "\\"", "*"]', 'dry_penalty_last_n': 0,
        'max_tokens_second': 0,
        **({'samplers': LLAMACPP_ORDER} if api_type == 'llamacpp' else {}),
        'stopping_strings': STOPS, 'stop': STOPS, 'truncation_length': 8192,
        'ban_eos_token': False, 'skip_special_tokens': True, 'include_reasoning': True,
        'top_a': 0, 'tfs': 1,
        'mirostat_mode': 0, 'mirostat_tau': 5, 'mirostat_eta': 0.1,
        'custom_token_bans': '', 'banned_strings': [],
        'api_type': api_type, 'api_server': 'http://127.0.0.1:8796',
        'xtc_threshold': 0.1, 'xtc_probability': 0, 'nsigma': 0.0, 'top_n_sigma': 0.0,
        'min_keep': 0, 'adaptive_target': -0.01, 'adaptive_decay': 0.9,
    }


def non_aphrodite():
    return {
        'rep_pen': 1.2, 'rep_pen_range': 0, 'repetition_penalty_range': 0,
        'guidance_scale': 1, 'negative_prompt': '',
        'repeat_penalty': 1.2, 'repeat_last_n': 0, 'n_predict': N, 'num_predict': N,
        'num_ctx': 8192, 'mirostat': 0, 'ignore_eos': False, 'rep_pen_slope': 1,
    }


# ---- llama.cpp type: whole body to /completion
def llamacpp_body(stream):
    p = base_params('llamacpp')
    p['n'] = 1                      # TABBY || LLAMACPP
    p.update(non_aphrodite())
    p.update({'logit_bias': [], 'grammar': '', 'cache_prompt': True,
              'dry_sequence_breakers': ["\n", ":", "\"", "*"]})
    if stream:
        p['stream'] = True
    return p


peel(C, "tc-llamacpp-default-nostream", "/completion", llamacpp_body(False), "llamacpp", SRC_TC)
peel(C, "tc-llamacpp-default-stream", "/completion", llamacpp_body(True), "llamacpp", SRC_TC)
b = llamacpp_body(True)
b.update({'dry_multiplier': 0.8, 'xtc_probability': 0.5, 'min_p': 0.05, 'top_k': 0, 'top_p': 1,
          'temperature': 1.0, 'rep_pen': 1.0, 'repeat_penalty': 1.0, 'repetition_penalty': 1.0})
peel(C, "tc-llamacpp-dry-xtc-preset", "/completion", b, "llamacpp", SRC_TC,
     "common 'DRY + XTC + min_p' roleplay preset values")
b = llamacpp_body(True); b.update({'seed': 1234, 'sampler_seed': 1234})
peel(C, "tc-llamacpp-fixed-seed", "/completion", b, "llamacpp", SRC_TC, "seed >= 0 adds seed and sampler_seed")

# ---- vLLM type: filtered by VLLM_KEYS
VLLM_KEYS = ['model', 'prompt', 'best_of', 'echo', 'frequency_penalty', 'logit_bias', 'logprobs', 'max_tokens',
             'n', 'presence_penalty', 'seed', 'stop', 'stream', 'suffix', 'temperature', 'top_p', 'user',
             'use_beam_search', 'top_k', 'min_p', 'repetition_penalty', 'length_penalty', 'early_stopping',
             'stop_token_ids', 'ignore_eos', 'min_tokens', 'skip_special_tokens', 'spaces_between_special_tokens',
             'truncate_prompt_tokens', 'include_stop_str_in_output', 'response_format', 'guided_json',
             'guided_regex', 'guided_choice', 'guided_grammar', 'guided_decoding_backend', 'guided_whitespace_pattern']


def vllm_body(stream, logprobs=False):
    p = base_params('vllm')
    p['model'] = MODEL
    p.update({'n': 1, 'ignore_eos': False, 'spaces_between_special_tokens': True})
    if logprobs:
        p['logprobs'] = 5
    if stream:
        p['stream'] = True
    return {k: v for k, v in p.items() if k in VLLM_KEYS}


peel(C, "tc-vllm-default-stream", "/v1/completions", vllm_body(True), "cmpl",
     SRC_TC + " (VLLM_KEYS filter)")
peel(C, "tc-vllm-token-probabilities", "/v1/completions", vllm_body(False, logprobs=True), "cmpl",
     SRC_TC, "power_user.request_token_probabilities -> logprobs: 5")

# ---- Generic (OpenAI-compatible) type
OPENAI_KEYS = ['model', 'prompt', 'stream', 'temperature', 'top_p', 'frequency_penalty', 'presence_penalty',
               'stop', 'seed', 'logit_bias', 'logprobs', 'max_tokens', 'n', 'best_of']
p = base_params('generic'); p.update(non_aphrodite()); p['model'] = MODEL; p['stream'] = True
p = {k: v for k, v in p.items() if k in OPENAI_KEYS}; p['stop'] = p['stop'][:4]
peel(C, "tc-generic-default-stream", "/v1/completions", p, "cmpl", SRC_TC + " (OPENAI_KEYS filter)")

# ---- ooba (text-generation-webui) type pointed at an OpenAI-compatible server: whole body
p = base_params('ooba'); p.update(non_aphrodite())
p.update({'min_length': 0, 'num_beams': 1, 'length_penalty': 1, 'early_stopping': False,
          'sampler_priority': ['repetition_penalty', 'presence_penalty', 'frequency_penalty', 'dry', 'temperature'],
          'encoder_repetition_penalty': 1, 'no_repeat_ngram_size': 0, 'penalty_alpha': 0,
          'temperature_last': True, 'do_sample': True, 'epsilon_cutoff': 0, 'eta_cutoff': 0, 'stream': True})
peel(C, "tc-ooba-whole-body", "/v1/completions", p, "cmpl", SRC_TC,
     "ooba type sends everything unfiltered (also TabbyAPI/KoboldCpp types)")

# ---- Chat completion, Custom (OpenAI-compatible) source
SRC_CC = "SillyTavern src/endpoints/backends/chat-completions.js (CUSTOM source requestBody)"
cc = {'messages': MSGS, 'model': MODEL, 'temperature': 1, 'max_tokens': N, 'stream': True,
      'presence_penalty': 0, 'frequency_penalty': 0, 'top_p': 1, 'stop': []}
peel(C, "cc-custom-default-stream", "/v1/chat/completions", cc, "chat", SRC_CC)
cc2 = dict(cc); cc2['top_k'] = 0; cc2['seed'] = -1
peel(C, "cc-custom-topk0-seed-1", "/v1/chat/completions", cc2, "chat", SRC_CC,
     "top_k / seed as the sampler panel leaves them when shown for Custom")
cc3 = dict(cc); cc3['messages'] = [
    {'role': 'system', 'content': "Write Seraphina's next reply."},
    {'role': 'system', 'content': '[Example Chat]'},
    {'role': 'system', 'name': 'example_user', 'content': 'Hi!'},
    {'role': 'system', 'name': 'example_assistant', 'content': 'Hello, traveller.'},
    {'role': 'system', 'content': '[Start a new Chat]'},
    {'role': 'user', 'content': 'Hello!'}]
peel(C, "cc-custom-example-dialogue-names", "/v1/chat/completions", cc3, "chat", SRC_CC,
     "a card with example messages: public/scripts/openai.js marks them system messages named example_user/example_assistant")
cc4 = dict(cc); cc4['logprobs'] = True; cc4['top_logprobs'] = 10
peel(C, "cc-custom-token-probabilities", "/v1/chat/completions", cc4, "chat", SRC_CC,
     "Request token probabilities: logprobs 10 -> {logprobs:true, top_logprobs:10}")
cc5 = dict(cc); cc5['messages'] = [
    {'role': 'system', 'content': "Write the next reply in a group chat."},
    {'role': 'user', 'name': 'User', 'content': 'Hello both!'},
    {'role': 'assistant', 'name': 'Seraphina', 'content': 'Welcome, traveller.'},
    {'role': 'user', 'name': 'User', 'content': 'How are you?'}]
peel(C, "cc-custom-group-chat-names", "/v1/chat/completions", cc5, "chat", SRC_CC,
     "names_behavior DEFAULT: completion-object names in group chats (public/scripts/openai.js)")
b = llamacpp_body(True); b.update({'logprobs': 10, 'n_probs': 10})
peel(C, "tc-llamacpp-token-probabilities", "/completion", b, "llamacpp", SRC_TC,
     "power_user.request_token_probabilities: logprobs 10 (getLogprobsNumber) and n_probs 10")
b = llamacpp_body(False); b.update({'json_schema': {"type": "object", "properties": {"a": {"type": "string"}}}}); del b['grammar']
peel(C, "tc-llamacpp-json-schema", "/completion", b, "llamacpp", SRC_TC, "JSON schema set: grammar/grammar_string deleted")
