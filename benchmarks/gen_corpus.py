#!/usr/bin/env python3
"""Generates the benchmark corpora and query files (deterministic).

Corpora, all PRE-TOKENIZED: lower-case ASCII terms [a-z0-9]+ separated by
single spaces, so every engine (whatever its analyzer: whitespace, FTS5's
'ascii', tantivy's 'default', PISA's English tokenizer) indexes exactly the
same terms. File format: one document a line, `id<TAB>text`. Document ids are
zero-padded so that id order == line order == every engine's internal doc-id
order (ties then break the same way everywhere).

  synth-<n>   Zipfian vocabulary (s = 1.0 over 1M pseudo-words), document
              lengths log-normal clipped to [50, 500] tokens (median ~150).
              Generated in chunks of 10k documents, chunk i seeded with
              (seed, i): smaller sizes are prefixes of larger ones.
  gcide       The Collaborative International Dictionary of English as
              Debian's dict-gcide ships it (/usr/share/dictd/gcide.*): one
              document per distinct article (~126k), source tags
              ("[1913 Webster]") and pronunciation fields dropped.
  gcide-20k   A seeded uniform 20k sample of gcide (the --quick corpus).

Queries (<corpus>.queries.tsv, `qid<TAB>term term ...`): 1 to 5 distinct
terms, each drawn from a document-frequency stratum chosen uniformly among the
log10 strata [1], [2,9], [10,99], ... so rare and frequent terms are equally
represented. The stratum of each term is kept in <corpus>.queries.meta.json.
"""
import argparse
import gzip
import json
import math
import os
import random
import re
import sys
import time

import numpy as np

ZIPF_S = 1.0
VOCAB = 1_000_000
CHUNK = 10_000
LEN_MEDIAN = 150
LEN_SIGMA = 0.6
LEN_MIN, LEN_MAX = 50, 500

_CONS = "bcdfghjklmnprstvwxz"  # 19
_VOW = "aeiouy"                # 6  -> 114 syllables


def pseudo_word(rank):
    """A pronounceable word for a 0-based Zipf rank; frequent terms are short."""
    syl = []
    r = rank
    while True:
        r, s = divmod(r, len(_CONS) * len(_VOW))
        syl.append(_CONS[s // len(_VOW)] + _VOW[s % len(_VOW)])
        if r == 0:
            break
        r -= 1  # bijective numbering: every string length is used fully
    return "".join(reversed(syl))


def synth_docs(n_docs, seed):
    words = np.array([pseudo_word(r) for r in range(VOCAB)], dtype=object)
    ranks = np.arange(1, VOCAB + 1, dtype=np.float64)
    cdf = np.cumsum(ranks ** -ZIPF_S)
    cdf /= cdf[-1]
    for chunk in range((n_docs + CHUNK - 1) // CHUNK):
        rng = np.random.default_rng([seed, chunk])
        n = min(CHUNK, n_docs - chunk * CHUNK)
        lens = np.exp(rng.normal(math.log(LEN_MEDIAN), LEN_SIGMA, n))
        lens = np.clip(np.rint(lens), LEN_MIN, LEN_MAX).astype(np.int64)
        toks = np.searchsorted(cdf, rng.random(int(lens.sum())), side="right")
        toks = np.minimum(toks, VOCAB - 1)
        tw = words[toks]
        pos = 0
        for i in range(n):
            yield f"d{chunk * CHUNK + i:07d}", " ".join(tw[pos:pos + lens[i]])
            pos += lens[i]


_B64 = {c: i for i, c in enumerate(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}
_SOURCE_TAG = re.compile(r"\[(?:[^\]]*(?:Webster|WordNet|PJC|Century|Note|"
                         r"Obs|Source)[^\]]*)\]")
_PRON = re.compile(r"\\[^\\\n]*\\")
_TOKEN = re.compile(r"[a-z0-9]+")


def _b64(s):
    v = 0
    for c in s:
        v = v * 64 + _B64[c]
    return v


def tokenize(text):
    return _TOKEN.findall(text.lower())


def gcide_docs():
    index = "/usr/share/dictd/gcide.index"
    data_path = "/usr/share/dictd/gcide.dict.dz"
    if not os.path.exists(index):
        sys.exit("gcide: /usr/share/dictd/gcide.index missing; "
                 "apt-get install dict-gcide")
    spans = set()
    with open(index, encoding="utf-8") as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) >= 3 and not p[0].startswith("00-"):
                spans.add((_b64(p[1]), _b64(p[2])))
    data = gzip.open(data_path).read()
    n = 0
    for off, ln in sorted(spans):
        text = data[off:off + ln].decode("utf-8", "replace")
        text = _PRON.sub(" ", _SOURCE_TAG.sub(" ", text))
        toks = tokenize(text)
        if len(toks) < 3:
            continue
        yield f"g{n:07d}", " ".join(toks)
        n += 1


def write_corpus(path, docs):
    tmp = path + ".tmp"
    n_docs = n_tokens = 0
    with open(tmp, "w", encoding="ascii") as f:
        for doc_id, text in docs:
            f.write(f"{doc_id}\t{text}\n")
            n_docs += 1
            n_tokens += text.count(" ") + 1
    os.replace(tmp, path)
    return n_docs, n_tokens


def doc_freqs(path):
    df = {}
    with open(path, encoding="ascii") as f:
        for line in f:
            for t in set(line.rstrip("\n").split("\t", 1)[1].split(" ")):
                df[t] = df.get(t, 0) + 1
    return df


def make_queries(df, n_queries, seed):
    strata = {}
    for t, n in df.items():
        strata.setdefault(int(math.log10(n)), []).append(t)
    keys = sorted(strata)
    for k in keys:
        strata[k].sort()
    rng = random.Random(seed)
    queries, meta = [], []
    for _ in range(n_queries):
        length = rng.randint(1, 5)
        terms, levels = [], []
        while len(terms) < length:
            s = rng.choice(keys)
            t = rng.choice(strata[s])
            if t not in terms:
                terms.append(t)
                levels.append(s)
        queries.append(terms)
        meta.append(levels)
    return queries, meta, {str(k): len(strata[k]) for k in keys}


def parse_size(s):
    s = s.lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(s[-1], 1)
    return int(float(s.rstrip("km")) * mult)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="corpus directory")
    ap.add_argument("--corpus", required=True,
                    help="synth-10k | synth-100k | synth-1m | gcide | gcide-20k")
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=20240601)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    base = os.path.join(args.out, args.corpus)
    tsv, meta_path = base + ".tsv", base + ".meta.json"
    qpath = base + f".q{args.queries}.tsv"
    t0 = time.time()
    if not os.path.exists(meta_path):
        if args.corpus.startswith("synth-"):
            n = parse_size(args.corpus[len("synth-"):])
            n_docs, n_tokens = write_corpus(tsv, synth_docs(n, args.seed))
            desc = (f"synthetic: Zipf s={ZIPF_S} over {VOCAB} pseudo-words, "
                    f"lengths lognormal(median {LEN_MEDIAN}, sigma {LEN_SIGMA}) "
                    f"clipped to [{LEN_MIN},{LEN_MAX}], seed {args.seed}")
        elif args.corpus == "gcide":
            n_docs, n_tokens = write_corpus(tsv, gcide_docs())
            desc = "GCIDE 0.48 articles (Debian dict-gcide), one per document"
        elif args.corpus.startswith("gcide-"):
            n = parse_size(args.corpus[len("gcide-"):])
            docs = list(gcide_docs())
            keep = sorted(random.Random(args.seed).sample(range(len(docs)), n))
            n_docs, n_tokens = write_corpus(
                tsv, ((f"g{i:07d}", docs[j][1]) for i, j in enumerate(keep)))
            desc = f"seeded uniform sample of {n} GCIDE articles"
        else:
            sys.exit(f"unknown corpus {args.corpus!r}")
        df = doc_freqs(tsv)
        with open(meta_path, "w") as f:
            json.dump({"corpus": args.corpus, "description": desc,
                       "n_docs": n_docs, "n_tokens": n_tokens,
                       "avg_len": n_tokens / n_docs, "n_terms": len(df),
                       "seed": args.seed}, f, indent=1)
        print(f"[gen] {args.corpus}: {n_docs} docs, {n_tokens} tokens, "
              f"{len(df)} terms in {time.time() - t0:.1f}s", flush=True)
    else:
        df = None
    if not os.path.exists(qpath):
        if df is None:
            df = doc_freqs(tsv)
        queries, levels, sizes = make_queries(df, args.queries, args.seed + 1)
        with open(qpath + ".tmp", "w") as f:
            for i, q in enumerate(queries):
                f.write(f"q{i:05d}\t{' '.join(q)}\n")
        os.replace(qpath + ".tmp", qpath)
        with open(qpath + ".meta.json", "w") as f:
            json.dump({"strata_sizes": sizes, "levels": levels}, f)
        print(f"[gen] {qpath}: {len(queries)} queries", flush=True)
    print(tsv)
    print(qpath)


if __name__ == "__main__":
    main()
