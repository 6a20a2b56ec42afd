#!/usr/bin/env python3
"""Drivers for the engines reached through Python: tantivy (tantivy-py),
PISA (pyterrier-pisa's native module) and bm25s.

Same protocol and output as the C++ drivers (see bench_common.h):
  py_bench.py ENGINE build  --corpus C --index DIR --out JSON
  py_bench.py ENGINE search --corpus C --index DIR --queries Q --out JSON
                            --dump TSV [--threads N] [--warmup N]
                            [--warmup-seconds S] [--min-qps-seconds S]

Only the engine call is timed (the query object is built inside it, as in
every driver). The binding overhead is reported separately as
`overhead_us`: the median time of the same call for a query whose only term
is absent from the index (the engine does no scoring work).
QPS with all cores: the engine's own parallel batch call where it has one
(PISA, bm25s); otherwise (tantivy) one process per core, each with its own
searcher, because Python threads serialize on the GIL outside the engine.
Peak RSS (VmHWM) includes the Python interpreter and the imported modules.
"""
import argparse
import json
import math
import multiprocessing as mp
import os
import shutil
import sys
import time

ABSENT_TERM = "zzzzabsentterm"


def peak_rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def dir_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            p = os.path.join(root, name)
            if os.path.isfile(p) and not os.path.islink(p):
                total += os.path.getsize(p)
    return total


def read_corpus(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            doc_id, text = line.rstrip("\n").split("\t", 1)
            yield doc_id, text


def read_queries(path):
    qs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            qid, text = line.rstrip("\n").split("\t", 1)
            terms = list(dict.fromkeys(text.split()))
            qs.append((qid, terms))
    return qs


def summarize(us):
    v = sorted(us)
    n = len(v)
    pct = lambda p: v[max(1, math.ceil(p * n)) - 1]
    return {"p50_us": pct(0.5), "p99_us": pct(0.99), "mean_us": sum(v) / n,
            "max_us": v[-1], "n": n}


# ---------------------------------------------------------------- tantivy
class Tantivy:
    name = "tantivy"
    notes = ("tantivy-py {v}: BM25 k1 1.2 b 0.75 (fixed in tantivy), Lucene's "
             "idf, lengths quantized like Lucene, scores x (1+k1); field "
             "'whitespace' tokenizer, index_option=freq (no positions); 1 "
             "writer thread; search(count=False) so block-WAND applies; QPS "
             "with one process per core")

    def __init__(self):
        import tantivy
        self.t = tantivy
        self.notes = self.notes.format(v=getattr(tantivy, "__version__", "?"))

    def schema(self):
        sb = self.t.SchemaBuilder()
        sb.add_text_field("body", stored=False, tokenizer_name="whitespace",
                          index_option="freq")
        sb.add_unsigned_field("n", stored=True, indexed=False, fast=False)
        return sb.build()

    def build(self, corpus, index_dir, extra):
        os.makedirs(index_dir)
        index = self.t.Index(self.schema(), path=index_dir)
        w = index.writer(heap_size=256_000_000, num_threads=1)
        for n, (_, text) in enumerate(read_corpus(corpus)):
            w.add_document(self.t.Document(body=text, n=n))
        w.commit()
        w.wait_merging_threads()

    def open(self, index_dir):
        self.index = self.t.Index.open(index_dir)
        self.index.reload()
        self.searcher = self.index.searcher()
        self.sch = self.index.schema

    def search(self, terms, k):
        t = self.t
        q = t.Query.boolean_query(
            [(t.Occur.Should, t.Query.term_query(self.sch, "body", x))
             for x in terms])
        return self.searcher.search(q, limit=k, count=False).hits

    def hits(self, native):
        return [(None, self.searcher.doc(addr)["n"][0], score)
                for score, addr in native]

    batch = None


# ---------------------------------------------------------------- PISA
class Pisa:
    name = "pisa"
    notes = ("pyterrier-pisa {v} (PISA native module called directly, no "
             "pandas): block_simdbp, block_max_wand, BM25 k1 1.2 b 0.75 with "
             "PISA's idf ln((N-n+.5)/(n+.5)) floored at 1e-6, scores x (1+k1), "
             "exact lengths; stemmer/stopwords none; pretokenised queries; "
             "index_bytes counts the files search reads (compressed index, "
             "wand data, lexicons)")
    ENCODING = "block_simdbp"
    ALGORITHM = "block_max_wand"

    def __init__(self):
        import numpy as np
        import pyterrier_pisa
        from pyterrier_pisa import _pisathon
        self.np, self.pp, self.native = np, pyterrier_pisa, _pisathon
        self.notes = self.notes.format(v=pyterrier_pisa.__version__)
        self.bufs = {}

    def _prepare(self, index_dir):
        ctx = self.native.RetrievalContext()
        self.native.prepare_index(ctx, index_dir, self.ENCODING, "bm25", "",
                                  quantize=0, bm25_k1=1.2, bm25_b=0.75,
                                  stop_fname="")
        return ctx

    def build(self, corpus, index_dir, extra):
        idx = self.pp.PisaIndex(index_dir, stemmer="none", stops="none",
                                threads=1)
        idx.indexer(mode="overwrite").index(
            {"docno": doc_id, "text": text}
            for doc_id, text in read_corpus(corpus))
        self._prepare(index_dir)  # builds wand data + compressed index
        extra["dir_bytes_with_build_files"] = dir_bytes(index_dir)

    @classmethod
    def search_files(cls, index_dir):
        return [os.path.join(index_dir, f) for f in os.listdir(index_dir)
                if f.endswith((".bmw.64", "." + cls.ENCODING))
                or f in ("fwd.termlex", "fwd.doclex", "pt_meta.json")]

    def open(self, index_dir):
        self.ctx = self._prepare(index_dir)

    def _buffers(self, n):
        if n not in self.bufs:
            np = self.np
            self.bufs[n] = (np.empty(n, dtype=np.int32),
                            np.empty(n, dtype=object),
                            np.empty(n, dtype=np.int32),
                            np.empty(n, dtype=np.float32))
        return self.bufs[n]

    def _retrieve(self, queries, k, threads):
        qi, dn, rk, sc = self._buffers(len(queries) * k)
        size = self.native.retrieve(
            self.ctx, self.ALGORITHM, queries, k=k, threads=threads,
            pretokenised=True, query_weighted=0, result_qidxs=qi,
            result_docnos=dn, result_ranks=rk, result_scores=sc)
        return size, qi, dn, sc

    def search(self, terms, k):
        size, _, dn, sc = self._retrieve([(0, {t: 1.0 for t in terms})], k, 1)
        return dn[:size].tolist(), sc[:size].tolist()

    def hits(self, native):
        return [(d, None, float(s)) for d, s in zip(*native)]

    def batch(self, queries, k, threads):
        self._retrieve([(i, {t: 1.0 for t in terms})
                        for i, (_, terms) in enumerate(queries)], k, threads)
        return len(queries)


# ---------------------------------------------------------------- bm25s
class Bm25s:
    name = "bm25s"
    notes = ("bm25s {v}: method=lucene (our formula, exact lengths; scores "
             "precomputed per (term, doc) in float32), backend={b}; in-memory "
             "(load without mmap); token ids from our whitespace split")

    def __init__(self):
        import numpy as np
        import bm25s
        self.np, self.bm25s = np, bm25s
        try:
            import numba  # noqa: F401
            self.backend = "numba"
        except ImportError:
            self.backend = "numpy"
        self.notes = self.notes.format(v=bm25s.__version__, b=self.backend)

    def build(self, corpus, index_dir, extra):
        vocab, ids = {}, []
        for _, text in read_corpus(corpus):
            ids.append([vocab.setdefault(t, len(vocab)) for t in text.split(" ")])
        r = self.bm25s.BM25(method="lucene", k1=1.2, b=0.75,
                            backend=self.backend)
        r.index((ids, vocab), show_progress=False)
        del ids
        r.save(index_dir)

    def open(self, index_dir):
        self.r = self.bm25s.BM25.load(index_dir, mmap=False,
                                      show_progress=False)
        self.r.backend = self.backend

    def search(self, terms, k):
        known = [t for t in terms if t in self.r.vocab_dict]
        if not known:  # bm25s raises on queries with no known token
            return None
        res = self.r.retrieve([known], k=k, show_progress=False,
                              n_threads=0)
        return res.documents[0], res.scores[0]

    def hits(self, native):
        if native is None:
            return []
        return [(None, int(d), float(s)) for d, s in zip(*native) if s > 0]

    # bm25s is a Python library: there is no binding to separate from it.
    measure_overhead = False

    def batch(self, queries, k, threads):
        qs = [[t for t in terms if t in self.r.vocab_dict]
              for _, terms in queries]
        qs = [q for q in qs if q]
        self.r.retrieve(qs, k=k, show_progress=False, n_threads=threads)
        return len(qs)


ENGINES = {"tantivy": Tantivy, "pisa": Pisa, "bm25s": Bm25s}


def time_pass(engine, queries, k, keep=None):
    us = []
    for _, terms in queries:
        t0 = time.perf_counter_ns()
        native = engine.search(terms, k)
        us.append((time.perf_counter_ns() - t0) / 1e3)
        if keep is not None:
            keep.append(engine.hits(native))
    return us


def _qps_worker(name, index_dir, queries, rank, nproc, reps, barrier, out):
    engine = ENGINES[name]()
    engine.open(index_dir)
    mine = queries[rank::nproc]
    time_pass(engine, mine, 10)  # warm this process
    barrier.wait()
    t0 = time.perf_counter()
    for _ in range(reps):
        for _, terms in mine:
            engine.search(terms, 10)
    out.put((len(mine) * reps, time.perf_counter() - t0))


def measure_qps(args, engine, queries, single_mean_us):
    if engine.batch is not None:
        engine.batch(queries, 10, args.threads)  # warm the parallel path
        total, t0 = 0, time.perf_counter()
        while True:
            total += engine.batch(queries, 10, args.threads)
            if time.perf_counter() - t0 >= args.min_qps_seconds:
                break
        return total / (time.perf_counter() - t0), "engine batch call"
    ctx = mp.get_context("fork")
    pass_s = single_mean_us * len(queries) / 1e6 / args.threads
    reps = max(1, math.ceil(args.min_qps_seconds / max(pass_s, 1e-9)))
    barrier, out = ctx.Barrier(args.threads), ctx.Queue()
    procs = [ctx.Process(target=_qps_worker,
                         args=(engine.name, args.index, queries, r,
                               args.threads, reps, barrier, out))
             for r in range(args.threads)]
    for p in procs:
        p.start()
    res = [out.get() for _ in procs]
    print(f"[{engine.name}] qps workers (queries, s): {res}", file=sys.stderr)
    for p in procs:
        p.join()
    return (sum(n for n, _ in res) / max(s for _, s in res),
            f"{args.threads} processes")


def run_build(args, engine):
    shutil.rmtree(args.index, ignore_errors=True)
    extra = {}
    t0 = time.perf_counter()
    engine.build(args.corpus, args.index, extra)
    build_s = time.perf_counter() - t0
    rss = peak_rss_bytes()
    n_docs = sum(1 for _ in open(args.corpus, encoding="utf-8"))
    if isinstance(engine, Pisa):
        index_bytes = sum(os.path.getsize(f)
                          for f in Pisa.search_files(args.index))
    else:
        index_bytes = dir_bytes(args.index)
    out = {"engine": engine.name, "phase": "build", "n_docs": n_docs,
           "build_s": build_s, "index_bytes": index_bytes,
           "peak_rss_bytes": rss, "notes": engine.notes, **extra}
    with open(args.out, "w") as f:
        json.dump(out, f)
    print(f"[{engine.name}] built {n_docs} docs in {build_s:.2f} s",
          file=sys.stderr)


def run_search(args, engine):
    queries = read_queries(args.queries)
    t0 = time.perf_counter()
    engine.open(args.index)
    open_ms = (time.perf_counter() - t0) * 1e3
    rss_open = peak_rss_bytes()

    w0, warm = time.perf_counter(), 0
    while True:
        time_pass(engine, queries, 10)
        time_pass(engine, queries, 100)
        warm += 2 * len(queries)
        if warm >= args.warmup and \
                time.perf_counter() - w0 >= args.warmup_seconds:
            break
    warm_s = time.perf_counter() - w0

    overhead = {"p50_us": None}
    if getattr(engine, "measure_overhead", True):
        absent = [(f"absent{i}", [ABSENT_TERM]) for i in range(200)]
        time_pass(engine, absent, 10)
        overhead = summarize(time_pass(engine, absent, 10))

    top10, top100 = [], []
    l10 = summarize(time_pass(engine, queries, 10, top10))
    l100 = summarize(time_pass(engine, queries, 100, top100))
    qps, qps_how = measure_qps(args, engine, queries, l10["mean_us"])
    rss = peak_rss_bytes()

    need = {d for hits in top10 for _, d, _ in hits if d is not None}
    ids = {}
    if need:
        for n, (doc_id, _) in enumerate(read_corpus(args.corpus)):
            if n in need:
                ids[n] = doc_id
    with open(args.dump, "w") as f:
        for (qid, _), hits in zip(queries, top10):
            for r, (doc_id, docno, score) in enumerate(hits[:10]):
                f.write(f"{qid}\t{r + 1}\t{doc_id or ids[docno]}\t{score!r}\n")
    out = {"engine": engine.name, "phase": "search", "n_queries": len(queries),
           "open_ms": open_ms, "rss_after_open_bytes": rss_open,
           "warmup_queries": warm, "warmup_s": warm_s,
           "latency": {"10": l10, "100": l100},
           "overhead_us": overhead["p50_us"],
           "mean_hits_k100": sum(map(len, top100)) / len(top100),
           "qps": qps, "qps_threads": args.threads, "qps_how": qps_how,
           "peak_rss_bytes": rss, "notes": engine.notes}
    with open(args.out, "w") as f:
        json.dump(out, f)
    print(f"[{engine.name}] p50 k10 {l10['p50_us']:.1f} us (overhead "
          f"{overhead['p50_us']} us), qps {qps:.0f}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("engine", choices=sorted(ENGINES))
    ap.add_argument("phase", choices=["build", "search"])
    ap.add_argument("--corpus")
    ap.add_argument("--index", required=True)
    ap.add_argument("--queries")
    ap.add_argument("--out", required=True)
    ap.add_argument("--dump")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--warmup", type=int, default=4000)
    ap.add_argument("--warmup-seconds", type=float, default=3.0)
    ap.add_argument("--min-qps-seconds", type=float, default=2.0)
    args = ap.parse_args()
    engine = ENGINES[args.engine]()
    (run_build if args.phase == "build" else run_search)(args, engine)


if __name__ == "__main__":
    main()
