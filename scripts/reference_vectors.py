"""Writes the engine's reference vectors with llama.cpp (through llama-cpp-python) and gguf-py.

Run through scripts/reference-vectors, which prepares the venv. Output (committed, small):

  <out>/<model-id>.json   per model:
      tokenize:  for each text of TEXTS, llama_tokenize with (add_special, parse_special) =
                 (false, false) and (true, true), and llama_detokenize of each
      chat:      sample conversations rendered from the model's template as transformers renders
                 it (jinja2 sandbox, trim_blocks, lstrip_blocks), by llama.cpp's built-in
                 formatter, and the rendered prompt's token ids
      logits:    the top-10 logits at each of the first positions of the chat prompt
      greedy:    64 greedy tokens for 3 prompts, with the gap between the best two logits at each
                 step (a small gap is a near-tie that float order may flip)
  <out>/<model-id>.fuzz.json   ids of seeded random concatenations of awkward pieces
  <out>/dequant.json      blocks of every supported tensor type, from the models and random, with
                          gguf-py's dequantised values (f32, little-endian hex)
"""

import argparse
import ctypes
import datetime
import hashlib
import json
import os
import pathlib
import random

import gguf
import jinja2
import jinja2.sandbox
import numpy as np

llama_cpp = None  # imported in main() when the model vectors are written

MODELS = [
    {
        "id": "smollm2-135m-instruct-q4_1",
        "file": "SmolLM2-135M-Instruct.Q4_1.gguf",
        "builtin_template": None,
        "llama_cpp_template": None,  # the GGUF's own template (llama.cpp detects ChatML)
    },
    {
        "id": "gemma3-270m-q4_k_m",
        "file": "gemma-3-270m-q4_k_m.gguf",
        # The GGUF has no chat template: itinero uses its built-in Gemma 3 template and llama.cpp
        # its hard-coded "gemma" format.
        "builtin_template": "native-host/engine/src/chat/gemma3.jinja",
        "llama_cpp_template": "gemma",
    },
]

TEXTS = [
    "",
    " ",
    "   ",
    "\n",
    "Hello world",
    " Hello world",
    "Hello  world   with    runs of     spaces",
    "  leading and trailing  ",
    "\n\nnewlines\n\n\nand\ttabs\t\t\r\nCRLF\r\n",
    "unicode: café naïve façade Ångström Straße Ünïcödé ÀÉÎÕÜ ñ ç ß ø å æ œ",
    "emoji: 😀 👍🏽 👨‍👩‍👧‍👦 🇫🇷 ❤️ 🤖🚀",
    "CJK: 你好，世界！日本語のテキスト。한국어 텍스트",
    "scripts: مرحبا بالعالم שלום עולם नमस्ते दुनिया Привет, мир Γειά σου κόσμε",
    "math: ∑ ∫ √ ∞ ≠ ≤ ≥ → ⇒ ∀ ∃ ∈ ∅ ½ ² ³ ①",
    "zero\u200bwidth\u200cjoin\u200d non\u00a0breaking\u2003em\u3000ideographic",
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    'fn main() { let x: Vec<u8> = vec![0x1F, 255]; println!("{x:?}"); }',
    "numbers: 3.14159 2,718 1234567890 -42 1e-10 0x7fff 2024-11-22 12:30:45 $19.99 100%",
    "It's I'm we're they've you'll he'd DON'T Y'ALL",
    '<div class="btn">Click <b>here</b></div> &amp; &lt;tag&gt;',
    '{"action": "click", "index": 12, "text": null, "ok": [true, false]}',
    "URL: https://example.com/path/to?q=1&r=two#frag and mail@example.org",
    "abc123def456 x1y2z3",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa !!!!!!!!!! .......... ----------",
    "control\u0001chars\u0007here\u007f",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|endoftext|>",
    "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n<bos><eos>",
    "<unused0> [multimodal] <mask> <pad> <unk>",
    "The quick brown fox jumps over the lazy dog. THE QUICK BROWN FOX! the_quick-brown.fox",
]

# Random concatenations of awkward pieces (seeded): whitespace of every kind, digits, contractions,
# scripts, emoji sequences, unassigned and private-use code points, and special-token texts.
FUZZ_PIECES = [
    "Hello", " world", "  ", "   ", "\n", "\n\n", "\t", "\r\n", " ", "123", "4567", "3.14", "-", "'s", "'ll",
    "'RE", "é", "ñ", "ß", "😀", "👍🏽", "👨‍👩‍👧", "你好", "日本", "한국", "مرحبا", "नमस्ते", "Привет", "∑", "½",
    "²", "①", "\u200b", "\u00a0", "\u3000", "\u2003", "\u0085", "\u2028", "<|im_start|>", "<|im_end|>",
    "<start_of_turn>", "<end_of_turn>", "<bos>", "<eos>", "[multimodal]", "<unused7>", "{", "}", '"', "...",
    "!!", "?", "<div>", "</b>", "&amp;", "__init__", "x=1;", "\u0378", "\U000E0001", "\uE000", "\U0001F9FF",
    "a", "B", "zz", "ǅ", "ﬁ", "Ａ", "٣", "𝟘", "\x0b", "\x0c", "\x1f",
]
FUZZ_COUNT = 200


def fuzz_texts():
    rng = random.Random(7)
    return ["".join(rng.choice(FUZZ_PIECES) for _ in range(rng.randint(1, 12))) for _ in range(FUZZ_COUNT)]


CONVERSATIONS = {
    "agent": [
        {"role": "system", "content": "You are a browser agent. Answer with one JSON action."},
        {
            "role": "user",
            "content": "Goal: find the price of the blue mug.\nPage: [1] <a>Shop</a> [2] <button>Search</button>",
        },
        {"role": "assistant", "content": '{"action": "click", "index": 2}'},
        {"role": "user", "content": 'Now type "blue mug" into the search box.'},
    ],
    "no_system": [{"role": "user", "content": "Hi there! 👋 What can you do?"}],
}

GREEDY_PROMPTS = [
    {"name": "chat", "conversation": "agent"},
    {"name": "plain", "text": "The capital of France is"},
    {"name": "code", "text": "def fibonacci(n):\n"},
]

LOGIT_POSITIONS = 8
GREEDY_STEPS = 64
N_CTX = 1024


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def vocab_of(llm):
    return llm._model.vocab


def detokenize(llm, ids, remove_special, unparse_special):
    arr = (llama_cpp.llama_token * max(len(ids), 1))(*ids)
    size = 4096 + 64 * len(ids)
    buf = ctypes.create_string_buffer(size)
    n = llama_cpp.llama_detokenize(vocab_of(llm), arr, len(ids), buf, size, remove_special, unparse_special)
    assert n >= 0, n
    return buf.raw[:n]


def token_text(llm, token):
    if token < 0:
        return ""
    return llama_cpp.llama_vocab_get_text(vocab_of(llm), token).decode("utf-8")


def hf_render(template_source, messages, bos, eos, add_generation_prompt):
    """Renders a template the way transformers' apply_chat_template does."""

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return datetime.datetime.now().strftime(fmt)

    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(template_source).render(
        messages=messages, bos_token=bos, eos_token=eos, add_generation_prompt=add_generation_prompt
    )


def llama_cpp_render(template, messages, add_generation_prompt):
    """llama.cpp's own formatter (llama_chat_apply_template), which does not run Jinja."""
    keep = [(m["role"].encode(), m["content"].encode()) for m in messages]
    chat = (llama_cpp.llama_chat_message * len(keep))()
    for i, (role, content) in enumerate(keep):
        chat[i].role = role
        chat[i].content = content
    size = 1 << 16
    buf = ctypes.create_string_buffer(size)
    n = llama_cpp.llama_chat_apply_template(template.encode(), chat, len(keep), add_generation_prompt, buf, size)
    if n < 0:
        return None
    return buf.raw[:n].decode("utf-8")


def model_template(reader, spec, root):
    field = reader.fields.get("tokenizer.chat_template")
    if field is not None:
        return bytes(field.parts[field.data[0]]).decode("utf-8"), "gguf"
    return (root / spec["builtin_template"]).read_text(encoding="utf-8"), "builtin"


def top_k(row, k=10):
    idx = np.argsort(-row, kind="stable")[:k]
    return [{"id": int(i), "logit": float(row[i])} for i in idx]


def generate_model(spec, models_dir, root):
    path = pathlib.Path(models_dir) / spec["file"]
    print(f"== {spec['id']}: {path}")
    reader = gguf.GGUFReader(str(path))
    out = {
        "model": spec["file"],
        "model_sha256": sha256(path),
        "generator": f"llama-cpp-python {llama_cpp.__version__} (llama.cpp, CPU), gguf-py {gguf.__version__ if hasattr(gguf, '__version__') else '?'}",
        "settings": {"n_ctx": N_CTX, "logit_positions": LOGIT_POSITIONS, "greedy_steps": GREEDY_STEPS},
    }

    llm = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    vocab = vocab_of(llm)
    bos = token_text(llm, llama_cpp.llama_vocab_bos(vocab))
    eos = token_text(llm, llama_cpp.llama_vocab_eos(vocab))
    out["special"] = {
        "bos": llama_cpp.llama_vocab_bos(vocab),
        "eos": llama_cpp.llama_vocab_eos(vocab),
        "eot": llama_cpp.llama_vocab_eot(vocab),
        "add_bos": bool(llama_cpp.llama_vocab_get_add_bos(vocab)),
        "add_eos": bool(llama_cpp.llama_vocab_get_add_eos(vocab)),
    }

    tokenize = []
    for text in TEXTS:
        b = text.encode("utf-8")
        plain = llm.tokenize(b, add_bos=False, special=False)
        special = llm.tokenize(b, add_bos=True, special=True)
        tokenize.append(
            {
                "text": text,
                "ids": plain,
                "detok_hex": detokenize(llm, plain, False, False).hex(),
                "ids_special": special,
                "detok_special_hex": detokenize(llm, special, True, True).hex(),
            }
        )
    out["tokenize"] = tokenize
    fuzz = [
        [text, llm.tokenize(text.encode("utf-8"), add_bos=False, special=False),
         llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)]
        for text in fuzz_texts()
    ]

    template, origin = model_template(reader, spec, root)
    chat = {"template_origin": origin, "bos_token": bos, "eos_token": eos, "conversations": {}}
    for name, messages in CONVERSATIONS.items():
        rendered = hf_render(template, messages, bos, eos, True)
        llama_fmt = llama_cpp_render(spec["llama_cpp_template"] or template, messages, True)
        chat["conversations"][name] = {
            "messages": messages,
            "add_generation_prompt": True,
            "hf": rendered,
            "llama_cpp": llama_fmt,
            "ids": llm.tokenize(rendered.encode("utf-8"), add_bos=False, special=True),
        }
    out["chat"] = chat
    del llm

    llm = llama_cpp.Llama(
        model_path=str(path), n_ctx=N_CTX, n_batch=N_CTX, logits_all=True, n_threads=2, seed=0, verbose=False
    )
    chat_ids = out["chat"]["conversations"]["agent"]["ids"]
    llm.reset()
    llm.eval(chat_ids)
    scores = np.array(llm.scores[: len(chat_ids)], dtype=np.float32)
    out["logits"] = {
        "prompt": "chat.conversations.agent",
        "ids": chat_ids,
        "positions": [{"position": p, "top10": top_k(scores[p])} for p in range(min(LOGIT_POSITIONS, len(chat_ids)))],
    }

    greedy = []
    for prompt in GREEDY_PROMPTS:
        if "conversation" in prompt:
            ids = out["chat"]["conversations"][prompt["conversation"]]["ids"]
        else:
            ids = llm.tokenize(prompt["text"].encode("utf-8"), add_bos=True, special=False)
        llm.reset()
        llm.eval(ids)
        tokens, gaps = [], []
        stopped = False
        for _ in range(GREEDY_STEPS):
            row = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
            order = np.argsort(-row, kind="stable")[:2]
            tok = int(order[0])
            tokens.append(tok)
            gaps.append(float(row[order[0]] - row[order[1]]))
            if llama_cpp.llama_vocab_is_eog(vocab_of(llm), tok):
                stopped = True
                break
            llm.eval([tok])
        greedy.append(
            {
                "name": prompt["name"],
                "prompt": prompt.get("text"),
                "conversation": prompt.get("conversation"),
                "prompt_ids": ids,
                "tokens": tokens,
                "top2_gaps": gaps,
                "stopped_at_eog": stopped,
                "text": detokenize(llm, tokens, False, False).decode("utf-8", errors="replace"),
            }
        )
    out["greedy"] = greedy
    del llm
    return out, fuzz


def f16_bytes(rng, n, lo=-4.0, hi=4.0):
    """n random finite f16 values as bytes (scales of quantised blocks)."""
    return rng.uniform(lo, hi, n).astype(np.float16).tobytes()


def random_block(rng, qtype):
    """A random block whose f16/bf16 fields are finite, so the values are comparable."""
    t = gguf.GGMLQuantizationType
    block_elems, block_bytes = gguf.GGML_QUANT_SIZES[qtype]
    if qtype == t.F32:
        return rng.standard_normal(64).astype(np.float32).tobytes()
    if qtype == t.F16:
        return rng.standard_normal(64).astype(np.float16).tobytes()
    if qtype == t.BF16:
        f = rng.standard_normal(64).astype(np.float32)
        return (f.view(np.uint32) >> 16).astype(np.uint16).tobytes()
    raw = bytearray(rng.integers(0, 256, block_bytes, dtype=np.uint8).tobytes())
    # positions of the f16 scale fields in each block layout (ggml-common.h)
    scale_at = {
        t.Q4_0: [0], t.Q4_1: [0, 2], t.Q5_0: [0], t.Q5_1: [0, 2], t.Q8_0: [0],
        t.Q4_K: [0, 2], t.Q5_K: [0, 2], t.Q6_K: [208],
    }[qtype]
    for at in scale_at:
        raw[at : at + 2] = f16_bytes(rng, 1, -0.1, 0.1)
    return bytes(raw)


def generate_dequant(models_dir):
    t = gguf.GGMLQuantizationType
    rng = np.random.default_rng(20251122)
    blocks = []

    def add(qtype, data, source):
        values = gguf.quants.dequantize(np.frombuffer(data, dtype=np.uint8).copy(), qtype).astype(np.float32)
        assert np.all(np.isfinite(values)), source
        blocks.append({"type": qtype.name, "source": source, "hex": data.hex(), "values_hex": values.tobytes().hex()})

    real = [
        ("SmolLM2-135M-Instruct.Q4_1.gguf", ["blk.0.attn_norm.weight", "blk.0.ffn_down.weight", "token_embd.weight"]),
        ("gemma-3-270m-q4_k_m.gguf", ["blk.0.attn_q.weight", "blk.0.attn_output.weight", "blk.0.ffn_down.weight", "blk.0.attn_v.weight"]),
    ]
    for file, names in real:
        reader = gguf.GGUFReader(str(pathlib.Path(models_dir) / file))
        tensors = {tt.name: tt for tt in reader.tensors}
        for name in names:
            tensor = tensors[name]
            qtype = tensor.tensor_type
            block_elems, block_bytes = gguf.GGML_QUANT_SIZES[qtype]
            if qtype == t.F32:
                block_elems, block_bytes = 64, 256  # a run of 64 floats
            raw = np.asarray(tensor.data).view(np.uint8).reshape(-1)
            n_blocks = raw.size // block_bytes
            for b in (0, n_blocks // 2, n_blocks - 1):
                data = raw[b * block_bytes : (b + 1) * block_bytes].tobytes()
                add(qtype, data, f"{file}:{name} block {b}")
    for qtype in [t.F32, t.F16, t.BF16, t.Q8_0, t.Q4_0, t.Q4_1, t.Q5_0, t.Q5_1, t.Q4_K, t.Q5_K, t.Q6_K]:
        for i in range(2):
            add(qtype, random_block(rng, qtype), f"random {i}")
    return {"generator": "gguf-py quants.dequantize", "blocks": blocks}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--only", choices=["models", "dequant"], default=None)
    args = parser.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.only in (None, "dequant"):
        (out / "dequant.json").write_text(json.dumps(generate_dequant(args.models), indent=1) + "\n")
    if args.only in (None, "models"):
        global llama_cpp
        import llama_cpp as llama_cpp_module

        llama_cpp = llama_cpp_module
        # Plain CPU kernels only: no AMX / repacked weight buffers. Some VMs advertise AMX but
        # fault on its tile instructions, and the plain kernels are the portable reference.
        default_params = llama_cpp_module.llama_cpp.llama_model_default_params

        def model_params():
            params = default_params()
            params.use_extra_bufts = False
            return params

        llama_cpp_module.llama_cpp.llama_model_default_params = model_params
        for spec in MODELS:
            data, fuzz = generate_model(spec, args.models, root)
            (out / f"{spec['id']}.json").write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n")
            # [text, ids (plain), ids (add_special, parse_special)] per line
            lines = ",\n".join(json.dumps(case, ensure_ascii=False) for case in fuzz)
            (out / f"{spec['id']}.fuzz.json").write_text("[\n" + lines + "\n]\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
