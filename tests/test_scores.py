"""vLLM's Score and Rerank APIs (`/score`, `/rerank` and their other names) through a real
server: each score is the cosine similarity of two texts' embeddings, so the oracle is
/v1/embeddings' vectors (themselves checked against transformers' hidden states,
test_embeddings.py) and transformers' own on the same weights; the rerank order, `top_n`,
the documents returned, TEI's form, Cohere's `max_tokens_per_doc`, and every 400 naming its
field."""

from __future__ import annotations

import httpx
import openai
import pytest
import torch
import transformers

EPS = 1e-5
QUERY = "What is the capital of France?"
DOCS = ["I like cheese.", "Paris is the capital of France.", "Rome", "The quick brown fox"]


@pytest.fixture(scope="module")
def http(tiny_server):
    with httpx.Client(base_url=tiny_server[1], timeout=60) as client:
        yield client


def ok(r: httpx.Response) -> dict | list:
    assert r.status_code == 200, r.text
    return r.json()


def refused(r: httpx.Response, param: str) -> str:
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == param, r.text
    return r.json()["error"]["message"]


def embeddings(http: httpx.Client, texts: list) -> torch.Tensor:
    data = ok(http.post("/v1/embeddings", json={"input": texts}))["data"]
    return torch.tensor([d["embedding"] for d in data])


def cosines(first: torch.Tensor, second: torch.Tensor) -> list[float]:
    return torch.nn.functional.cosine_similarity(first, second, dim=-1).tolist()


def test_scores_are_the_cosines_of_the_embeddings_one_to_many_and_pair_by_pair(http):
    docs = embeddings(http, DOCS)
    query = embeddings(http, [QUERY])
    one_to_many = ok(http.post("/score", json={"text_1": QUERY, "text_2": DOCS}))
    assert one_to_many["object"] == "list" and one_to_many["id"].startswith("score-")
    assert [d["index"] for d in one_to_many["data"]] == [0, 1, 2, 3]
    assert [d["score"] for d in one_to_many["data"]] == pytest.approx(cosines(query, docs),
                                                                       abs=EPS)  # fmt: skip
    firsts = ["Rome", "Hello there", "Paris", "fox"]
    pairs = ok(http.post("/v1/score", json={"queries": firsts, "documents": DOCS}))
    expected = cosines(embeddings(http, firsts), docs)
    assert [d["score"] for d in pairs["data"]] == pytest.approx(expected, abs=EPS)
    # every name of the two sides gives the same scores; the tokens embedded counted once each
    tokens = sum(len(ok(http.post("/tokenize", json={"prompt": t}))["tokens"])
                 for t in [QUERY, *DOCS])  # fmt: skip
    assert one_to_many["usage"]["prompt_tokens"] == tokens
    for first, second in (("data_1", "data_2"), ("queries", "items"), ("queries", "documents")):
        again = ok(http.post("/score", json={first: QUERY, second: DOCS}))
        assert again["data"] == one_to_many["data"]


def test_a_score_is_transformers_cosine(http, tiny_model_dir):
    path = tiny_model_dir("llama")
    hf = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    vectors = []
    for text in (QUERY, DOCS[1]):
        ids = ok(http.post("/tokenize", json={"prompt": text}))["tokens"]
        with torch.no_grad():
            vectors.append(hf(torch.tensor([ids]), output_hidden_states=True)
                           .hidden_states[-1][0, -1])  # fmt: skip
    expected = torch.nn.functional.cosine_similarity(vectors[0], vectors[1], dim=0).item()
    got = ok(http.post("/score", json={"text_1": QUERY, "text_2": DOCS[1]}))["data"][0]["score"]
    assert got == pytest.approx(expected, abs=EPS)


def test_rerank_sorts_best_first_and_cuts_to_top_n(http, tiny_server):
    expected = cosines(embeddings(http, [QUERY]), embeddings(http, DOCS))
    order = sorted(range(len(DOCS)), key=lambda i: -expected[i])
    answer = ok(http.post("/rerank", json={"query": QUERY, "documents": DOCS}))
    assert answer["id"].startswith("rerank-") and answer["model"]
    assert [r["index"] for r in answer["results"]] == order
    assert [r["relevance_score"] for r in answer["results"]] == pytest.approx(
        [expected[i] for i in order], abs=EPS
    )
    assert [r["document"]["text"] for r in answer["results"]] == [DOCS[i] for i in order]
    top = ok(http.post("/v1/rerank", json={"query": QUERY, "documents": DOCS, "top_n": 2,
                                           "return_documents": False}))  # fmt: skip
    assert top["results"] == [{k: v for k, v in r.items() if k != "document"}
                              for r in answer["results"][:2]]  # fmt: skip
    for path in ("/v2/rerank", "/reranking", "/v1/reranking"):  # Cohere's, llama.cpp's
        again = ok(http.post(path, json={"query": QUERY, "documents": DOCS, "top_n": 0}))
        assert again["results"] == answer["results"]
    # TEI's form (llama.cpp takes it too): a list of {index, score[, text]}
    tei = ok(http.post("/rerank", json={"query": QUERY, "texts": DOCS, "return_text": True}))
    assert tei == [{"index": r["index"], "score": r["relevance_score"],
                    "text": r["document"]["text"]} for r in answer["results"]]  # fmt: skip
    # the openai package has no rerank method: its generic post reaches /v1/rerank
    sdk = openai.OpenAI(base_url=tiny_server[1] + "/v1", api_key="unused", max_retries=0)
    posted = sdk.post("/rerank", body={"query": QUERY, "documents": DOCS}, cast_to=object)
    assert [r["index"] for r in posted["results"]] == order


def test_max_tokens_per_doc_and_truncation_cut_what_is_embedded(http):
    ids = ok(http.post("/tokenize", json={"prompt": DOCS[1]}))["tokens"]
    query = embeddings(http, [QUERY])
    cut = ok(http.post("/rerank", json={"query": QUERY, "documents": [DOCS[1]],
                                        "max_tokens_per_doc": 3}))  # fmt: skip
    expected = cosines(query, embeddings(http, [ids[:3]]))[0]
    assert cut["results"][0]["relevance_score"] == pytest.approx(expected, abs=EPS)
    assert cut["usage"]["prompt_tokens"] == len(ok(http.post("/tokenize", json={
        "prompt": QUERY}))["tokens"]) + 3  # fmt: skip
    last = ok(http.post("/score", json={"text_1": QUERY, "text_2": DOCS[1],
                                        "truncate_prompt_tokens": 3}))  # fmt: skip
    q_ids = ok(http.post("/tokenize", json={"prompt": QUERY}))["tokens"]
    expected = cosines(embeddings(http, [q_ids[-3:]]), embeddings(http, [ids[-3:]]))[0]
    assert last["data"][0]["score"] == pytest.approx(expected, abs=EPS)


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/score", {"text_1": ["a", "b"], "text_2": ["a", "b", "c"]}, "text_2"),  # 2:3
        ("/score", {"text_1": ["a", "b"], "text_2": "a"}, "text_2"),  # N:1
        ("/score", {"text_1": "a"}, "text_2"),  # (the side left out)
        ("/score", {"text_1": "a", "documents": ["b"]}, "documents"),  # names of two pairs
        ("/score", {"queries": "a", "documents": ["b"], "items": ["c"]}, "items"),
        ("/score", {"text_1": [], "text_2": ["b"]}, "text_1"),
        ("/score", {"text_1": "a", "text_2": [1, 2]}, "text_2"),  # texts, not token ids
        ("/score", {"text_1": "a", "text_2": "b", "priority": 1}, "priority"),
        ("/score", {"text_1": "a", "text_2": "b", "softmax": True}, "softmax"),
        ("/score", {"text_1": "a", "text_2": ["b", "word " * 300]}, "text_2"),  # past the context
        ("/rerank", {"query": ["a"], "documents": ["b"]}, "query"),
        ("/rerank", {"query": "a", "documents": []}, "documents"),
        ("/rerank", {"query": "a"}, "documents"),
        ("/rerank", {"query": "a", "documents": ["b"], "texts": ["c"]}, "documents"),
        ("/rerank", {"query": "a", "documents": [{"text": "b"}]}, "documents"),
        ("/rerank", {"query": "a", "documents": ["b"], "top_n": -1}, "top_n"),
        ("/rerank", {"query": "a", "documents": ["b"], "return_text": True}, "return_text"),
        ("/rerank", {"query": "a", "texts": ["b"], "return_documents": False}, "return_documents"),
        ("/rerank", {"query": "a", "documents": ["b"], "max_tokens_per_doc": 0},
         "max_tokens_per_doc"),
        ("/rerank", {"query": "a", "documents": ["b"], "rank_fields": ["x"]}, "rank_fields"),
    ],
)  # fmt: skip
def test_what_cannot_act_is_a_400_naming_it(http, path, body, param):
    refused(http.post(path, json=body), param)


def test_a_text_past_the_context_names_its_place(http):
    message = refused(http.post("/rerank", json={"query": "a", "documents": ["b", "word " * 300]}),
                      "documents")  # fmt: skip
    assert message.startswith("documents[1]: ")
    r = http.post("/score", json={"text_1": "a", "text_2": "b", "model": "nope"})
    assert (r.status_code, r.json()["error"]["param"]) == (404, "model")


def test_no_ops_and_neutral_values_change_nothing(http):
    body = {"query": QUERY, "documents": DOCS}
    plain = ok(http.post("/rerank", json=body))["results"]
    extras = {"use_activation": False, "user": "u", "cache_salt": "s", "priority": 0,
              "mm_processor_kwargs": {}}  # fmt: skip
    assert ok(http.post("/rerank", json={**body, **extras}))["results"] == plain
    score = {"text_1": QUERY, "text_2": DOCS}
    assert ok(http.post("/score", json={**score, **extras}))["data"] == ok(
        http.post("/score", json=score))["data"]  # fmt: skip


def test_cheap_refusals_come_first_and_name_what_is_missing(http):
    many = ["word " * 50] * 1100
    r = http.post("/score", json={"text_1": many, "text_2": many})  # 2,200 texts in all
    assert "at most 2048" in refused(r, "text_2")
    r = http.post("/rerank", json={"query": "a", "documents": ["b"], "max_tokens_per_doc": 2,
                                   "truncate_prompt_tokens": 2})  # fmt: skip
    refused(r, "truncate_prompt_tokens")
    refused(http.post("/score", json={"text_1": "a", "text_2": "b", "truncate_prompt_tokens": 0}),
            "truncate_prompt_tokens")  # fmt: skip
    refused(http.post("/score", json={"text_1": "a"}), "text_2")  # the side left out
    refused(http.post("/score", json={"documents": ["a"]}), "queries")


def test_request_id_and_truncation_side_act(http):
    answer = ok(http.post("/rerank", json={"query": QUERY, "documents": DOCS, "request_id": "r1"}))
    assert answer["id"] == "rerank-r1"
    assert ok(http.post("/score", json={"text_1": "a", "text_2": "b", "request_id": "s1"}))[
        "id"] == "score-s1"  # fmt: skip
    ids = ok(http.post("/tokenize", json={"prompt": DOCS[1]}))["tokens"]
    q_ids = ok(http.post("/tokenize", json={"prompt": QUERY}))["tokens"]
    first = ok(http.post("/score", json={"text_1": QUERY, "text_2": DOCS[1],
                                         "truncate_prompt_tokens": 3,
                                         "truncation_side": "right"}))  # fmt: skip
    expected = cosines(embeddings(http, [q_ids[:3]]), embeddings(http, [ids[:3]]))[0]
    assert first["data"][0]["score"] == pytest.approx(expected, abs=EPS)
