#!/usr/bin/env python3
"""The transformers side of models/bench/bench_gpu.sh, and its setup.

  bench_transformers.py make --out DIR [--tokenizer-from DIR]
      A randomly initialized Qwen2-0.5B-shaped checkpoint (bf16) in DIR, with
      the fixture tokenizer (ids above its vocabulary are fine for a speed
      test), and DIR/prompts.json: the prompts both sides generate from.
  bench_transformers.py run --checkpoint DIR [--batches 1,64]
      [--new-tokens 128] [--reps 3] [--train-batch 8] [--train-seq 512]
      [--train-steps 5] [--json OUT]
      Generation tokens/s (greedy, exactly --new-tokens new tokens, prefill
      included, the default dynamic cache and sdpa attention: transformers
      "eager" in the sense of no torch.compile and no static cache), and a
      training step (forward + backward of the mean NLL over batch x seq
      tokens, bf16 weights), with torch's peak allocated memory for each.
"""
import argparse
import json
import os
import shutil
import sys
import time

import torch

QWEN2_05B = dict(vocab_size=151936, hidden_size=896, intermediate_size=4864,
                 num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
                 max_position_embeddings=32768, rope_theta=1000000.0, rms_norm_eps=1e-6,
                 tie_word_embeddings=True, use_sliding_window=False)
# For a smoke test of the scripts on a CPU.
TINY = dict(QWEN2_05B, vocab_size=2048, hidden_size=64, intermediate_size=128,
            num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2)


def make(args):
    from transformers import Qwen2Config, Qwen2ForCausalLM
    os.makedirs(args.out, exist_ok=True)
    shape = QWEN2_05B if args.shape == "qwen2-0.5b" else TINY
    cfg = Qwen2Config(**shape, eos_token_id=shape["vocab_size"] - 1,
                      bos_token_id=shape["vocab_size"] - 2)
    torch.manual_seed(0)
    with torch.device("cuda" if torch.cuda.is_available() else "cpu"):
        model = Qwen2ForCausalLM(cfg).to(torch.bfloat16)
    model.save_pretrained(args.out, safe_serialization=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
        src = os.path.join(args.tokenizer_from, name)
        if os.path.exists(src):
            shutil.copy(src, os.path.join(args.out, name))
    g = torch.Generator().manual_seed(1)
    rows = torch.randint(0, min(150000, cfg.vocab_size), (64, args.prompt_tokens),
                         generator=g).tolist()
    with open(os.path.join(args.out, "prompts.json"), "w") as f:
        json.dump({"prompt_tokens": args.prompt_tokens, "rows": rows}, f)
    n = sum(p.numel() for p in model.parameters())
    print(f"checkpoint: {n / 1e6:.1f}M parameters in {args.out}", file=sys.stderr)


def load(ckpt, device):
    from transformers import AutoModelForCausalLM
    try:
        model = AutoModelForCausalLM.from_pretrained(ckpt, dtype=torch.bfloat16)
    except TypeError:
        model = AutoModelForCausalLM.from_pretrained(ckpt, torch_dtype=torch.bfloat16)
    return model.to(device).eval()


def sync(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def reset_peak(device):
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()


def peak_gib(device):
    return torch.cuda.max_memory_allocated() / 2**30 if device.startswith("cuda") else 0.0


def run(args):
    device = args.device
    model = load(args.checkpoint, device)
    with open(os.path.join(args.checkpoint, "prompts.json")) as f:
        prompts = json.load(f)
    result = {"implementation": "transformers " + __import__("transformers").__version__ +
              " (torch " + torch.__version__ + ", " +
              getattr(model.config, "_attn_implementation", "?") + " attention)",
              "generate": []}
    for batch in [int(b) for b in args.batches.split(",")]:
        rows = [prompts["rows"][i % len(prompts["rows"])] for i in range(batch)]
        ids = torch.tensor(rows, device=device)
        mask = torch.ones_like(ids)

        def gen():
            with torch.no_grad():
                return model.generate(input_ids=ids, attention_mask=mask, do_sample=False,
                                      max_new_tokens=args.new_tokens,
                                      min_new_tokens=args.new_tokens, pad_token_id=0,
                                      temperature=None, top_p=None, top_k=None)
        gen()
        sync(device)
        reset_peak(device)
        times = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            out = gen()
            sync(device)
            times.append(time.perf_counter() - t0)
        assert out.shape[1] == ids.shape[1] + args.new_tokens
        best = min(times)
        result["generate"].append({
            "batch": batch, "prompt_tokens": prompts["prompt_tokens"],
            "new_tokens": args.new_tokens, "seconds_best": best,
            "seconds_mean": sum(times) / len(times),
            "tokens_per_s": batch * args.new_tokens / best,
            "peak_gib": peak_gib(device)})
        print(f"transformers generate batch {batch}: "
              f"{batch * args.new_tokens / best:.0f} tok/s", file=sys.stderr)
    model.train()
    g = torch.Generator().manual_seed(2)
    ids = torch.randint(0, model.config.vocab_size, (args.train_batch, args.train_seq),
                        generator=g).to(device)

    def step():
        model.zero_grad(set_to_none=True)
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        return float(loss)
    step()
    sync(device)
    reset_peak(device)
    t0 = time.perf_counter()
    for _ in range(args.train_steps):
        loss = step()
    sync(device)
    s = (time.perf_counter() - t0) / args.train_steps
    result["train"] = {"batch": args.train_batch, "seq": args.train_seq,
                       "steps": args.train_steps, "seconds_per_step": s,
                       "tokens_per_s": args.train_batch * args.train_seq / s,
                       "peak_gib": peak_gib(device), "loss": loss}
    print(f"transformers train: {args.train_batch * args.train_seq / s:.0f} tok/s",
          file=sys.stderr)
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("--out", required=True)
    m.add_argument("--tokenizer-from", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "testdata", "qwen2-tiny"))
    m.add_argument("--prompt-tokens", type=int, default=128)
    m.add_argument("--shape", choices=["qwen2-0.5b", "tiny"], default="qwen2-0.5b")
    r = sub.add_parser("run")
    r.add_argument("--checkpoint", required=True)
    r.add_argument("--batches", default="1,64")
    r.add_argument("--new-tokens", type=int, default=128)
    r.add_argument("--reps", type=int, default=3)
    r.add_argument("--train-batch", type=int, default=8)
    r.add_argument("--train-seq", type=int, default=512)
    r.add_argument("--train-steps", type=int, default=5)
    r.add_argument("--json", default="")
    r.add_argument("--device", default="cuda")
    args = ap.parse_args()
    make(args) if args.cmd == "make" else run(args)


if __name__ == "__main__":
    main()
