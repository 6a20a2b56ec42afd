// Lucene 8.8 (Java) driver, in-process: the same protocol as the C++ drivers
// (bench_common.h): `build` and `search` phases, each its own JVM.
//
// Index: field "body" with IndexOptions.DOCS_AND_FREQS and norms (no
// positions: our engine stores none), WhitespaceAnalyzer (the corpus is
// pre-tokenized), BM25Similarity(1.2, 0.75), forceMerge(1); the id is a
// StoredField (read back only after timing). For reference the build phase
// also records the size of the same index with positions, and with the text
// stored, without timing them (LUCENE_BENCH_VARIANTS=0 skips them).
// Search: MMapDirectory, DirectoryReader, one shared IndexSearcher with
// BM25Similarity(1.2, 0.75) and no query cache; BooleanQuery of SHOULD
// TermQuery clauses; IndexSearcher.search(query, k) (Lucene 8 counts hits up
// to 1000 and then prunes with block-max WAND). Only that call is timed,
// after a JIT warm-up over the query set.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import org.apache.lucene.analysis.core.WhitespaceAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.StoredField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.Term;
import org.apache.lucene.search.BooleanClause;
import org.apache.lucene.search.BooleanQuery;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.MMapDirectory;

public final class LuceneBench {
  static final String FIELD = "body";

  static Map<String, String> parse(String[] args) {
    Map<String, String> m = new HashMap<>();
    m.put("phase", args[0]);
    for (int i = 1; i + 1 < args.length; i += 2) m.put(args[i].substring(2), args[i + 1]);
    return m;
  }

  static long peakRssBytes() throws IOException {
    for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
      if (line.startsWith("VmHWM:")) {
        return Long.parseLong(line.substring(6).trim().split("\\s+")[0]) * 1024;
      }
    }
    return 0;
  }

  static long dirBytes(Path p) throws IOException {
    if (!Files.exists(p)) return 0;
    try (Stream<Path> s = Files.walk(p)) {
      return s.filter(Files::isRegularFile).mapToLong(f -> f.toFile().length()).sum();
    }
  }

  static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p)) return;
    try (Stream<Path> s = Files.walk(p)) {
      s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    }
  }

  static String json(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  static BM25Similarity similarity() { return new BM25Similarity(1.2f, 0.75f); }

  // Indexes the corpus; returns the number of documents.
  static long index(Path corpus, Path dir, IndexOptions opts, boolean storeText)
      throws IOException {
    deleteTree(dir);
    IndexWriterConfig cfg = new IndexWriterConfig(new WhitespaceAnalyzer());
    cfg.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
    cfg.setRAMBufferSizeMB(256);
    cfg.setSimilarity(similarity());
    FieldType body = new FieldType();
    body.setTokenized(true);
    body.setIndexOptions(opts);
    body.setOmitNorms(false);
    body.setStored(storeText);
    body.freeze();
    long n = 0;
    try (FSDirectory d = FSDirectory.open(dir);
         IndexWriter w = new IndexWriter(d, cfg);
         BufferedReader in = Files.newBufferedReader(corpus, StandardCharsets.UTF_8)) {
      String line;
      while ((line = in.readLine()) != null) {
        int tab = line.indexOf('\t');
        Document doc = new Document();
        doc.add(new StoredField("id", line.substring(0, tab)));
        doc.add(new Field(FIELD, line.substring(tab + 1), body));
        w.addDocument(doc);
        n++;
      }
      w.forceMerge(1);
      w.commit();
    }
    return n;
  }

  static void build(Map<String, String> a) throws IOException {
    Path corpus = Paths.get(a.get("corpus"));
    Path dir = Paths.get(a.get("index"));
    long t0 = System.nanoTime();
    long n = index(corpus, dir, IndexOptions.DOCS_AND_FREQS, false);
    double buildS = (System.nanoTime() - t0) / 1e9;
    long rss = peakRssBytes();
    long bytes = dirBytes(dir);
    StringBuilder extra = new StringBuilder();
    if (!"0".equals(System.getenv("LUCENE_BENCH_VARIANTS"))) {
      Path pos = Paths.get(dir + "-positions");
      index(corpus, pos, IndexOptions.DOCS_AND_FREQS_AND_POSITIONS, false);
      extra.append(", \"index_bytes_with_positions\": ").append(dirBytes(pos));
      deleteTree(pos);
      Path stored = Paths.get(dir + "-stored");
      index(corpus, stored, IndexOptions.DOCS_AND_FREQS, true);
      extra.append(", \"index_bytes_with_stored_text\": ").append(dirBytes(stored));
      deleteTree(stored);
    }
    try (PrintWriter out = new PrintWriter(a.get("out"), "UTF-8")) {
      out.println("{\"engine\": \"lucene\", \"phase\": \"build\", \"n_docs\": " + n
          + ", \"build_s\": " + buildS + ", \"index_bytes\": " + bytes
          + ", \"peak_rss_bytes\": " + rss + extra
          + ", \"notes\": " + json(notes()) + "}");
    }
    System.err.printf("[lucene] built %d docs in %.2f s%n", n, buildS);
  }

  static String notes() {
    return "Lucene 8.8.1 BM25Similarity(1.2,0.75): lengths quantized to one "
        + "byte (SmallFloat); DOCS_AND_FREQS + norms; forceMerge(1); "
        + "MMapDirectory; JVM " + System.getProperty("java.version");
  }

  static final class Q {
    String qid;
    String[] terms;
  }

  static List<Q> readQueries(Path p) throws IOException {
    List<Q> qs = new ArrayList<>();
    for (String line : Files.readAllLines(p)) {
      int tab = line.indexOf('\t');
      if (tab < 0) continue;
      Q q = new Q();
      q.qid = line.substring(0, tab);
      q.terms = Arrays.stream(line.substring(tab + 1).split(" "))
          .filter(t -> !t.isEmpty()).distinct().toArray(String[]::new);
      qs.add(q);
    }
    return qs;
  }

  static TopDocs search(IndexSearcher s, Q q, int k) throws IOException {
    BooleanQuery.Builder b = new BooleanQuery.Builder();
    for (String t : q.terms) {
      b.add(new TermQuery(new Term(FIELD, t)), BooleanClause.Occur.SHOULD);
    }
    Query query = b.build();
    return s.search(query, k);
  }

  static double[] timePass(IndexSearcher s, List<Q> qs, int k, List<TopDocs> keep)
      throws IOException {
    double[] us = new double[qs.size()];
    for (int i = 0; i < qs.size(); i++) {
      long t0 = System.nanoTime();
      TopDocs td = search(s, qs.get(i), k);
      us[i] = (System.nanoTime() - t0) / 1e3;
      if (keep != null) keep.add(td);
    }
    return us;
  }

  static String stats(double[] us) {
    double[] v = us.clone();
    Arrays.sort(v);
    double sum = 0;
    for (double x : v) sum += x;
    int n = v.length;
    double p50 = v[Math.max(1, (int) Math.ceil(0.50 * n)) - 1];
    double p99 = v[Math.max(1, (int) Math.ceil(0.99 * n)) - 1];
    return String.format("{\"p50_us\": %.3f, \"p99_us\": %.3f, \"mean_us\": %.3f, "
        + "\"max_us\": %.3f, \"n\": %d}", p50, p99, sum / n, v[n - 1], n);
  }

  static void searchPhase(Map<String, String> a) throws Exception {
    List<Q> qs = readQueries(Paths.get(a.get("queries")));
    int threads = Integer.parseInt(a.getOrDefault("threads",
        String.valueOf(Runtime.getRuntime().availableProcessors())));
    long warmup = Long.parseLong(a.getOrDefault("warmup", "4000"));
    double warmupS = Double.parseDouble(a.getOrDefault("warmup-seconds", "3"));
    double minQpsS = Double.parseDouble(a.getOrDefault("min-qps-seconds", "2"));

    long t0 = System.nanoTime();
    MMapDirectory dir = new MMapDirectory(Paths.get(a.get("index")));
    IndexReader reader = DirectoryReader.open(dir);
    IndexSearcher searcher = new IndexSearcher(reader);
    searcher.setSimilarity(similarity());
    searcher.setQueryCache(null);
    double openMs = (System.nanoTime() - t0) / 1e6;
    long rssOpen = peakRssBytes();

    long w0 = System.nanoTime();
    long warm = 0;
    do {
      timePass(searcher, qs, 10, null);
      timePass(searcher, qs, 100, null);
      warm += 2L * qs.size();
    } while (warm < warmup || (System.nanoTime() - w0) / 1e9 < warmupS);
    double warmS = (System.nanoTime() - w0) / 1e9;

    List<TopDocs> top10 = new ArrayList<>();
    List<TopDocs> top100 = new ArrayList<>();
    double[] l10 = timePass(searcher, qs, 10, top10);
    double[] l100 = timePass(searcher, qs, 100, top100);
    double meanHits = top100.stream().mapToInt(t -> t.scoreDocs.length).average().orElse(0);

    long total = 0;
    long q0 = System.nanoTime();
    do {
      AtomicInteger next = new AtomicInteger();
      Thread[] pool = new Thread[threads];
      for (int t = 0; t < threads; t++) {
        pool[t] = new Thread(() -> {
          try {
            for (int i; (i = next.getAndIncrement()) < qs.size();) search(searcher, qs.get(i), 10);
          } catch (IOException e) {
            throw new RuntimeException(e);
          }
        });
        pool[t].start();
      }
      for (Thread th : pool) th.join();
      total += qs.size();
    } while ((System.nanoTime() - q0) / 1e9 < minQpsS);
    double qps = total / ((System.nanoTime() - q0) / 1e9);
    long rss = peakRssBytes();

    try (PrintWriter out = new PrintWriter(a.get("dump"), "UTF-8")) {
      for (int i = 0; i < qs.size(); i++) {
        ScoreDoc[] sd = top10.get(i).scoreDocs;
        for (int r = 0; r < sd.length && r < 10; r++) {
          out.println(qs.get(i).qid + "\t" + (r + 1) + "\t"
              + reader.document(sd[r].doc).get("id") + "\t" + sd[r].score);
        }
      }
    }
    try (PrintWriter out = new PrintWriter(a.get("out"), "UTF-8")) {
      out.println("{\"engine\": \"lucene\", \"phase\": \"search\", \"n_queries\": " + qs.size()
          + ", \"open_ms\": " + openMs + ", \"rss_after_open_bytes\": " + rssOpen
          + ", \"warmup_queries\": " + warm + ", \"warmup_s\": " + warmS
          + ", \"latency\": {\"10\": " + stats(l10) + ", \"100\": " + stats(l100) + "}"
          + ", \"mean_hits_k100\": " + meanHits + ", \"qps\": " + qps
          + ", \"qps_threads\": " + threads + ", \"qps_queries\": " + total
          + ", \"peak_rss_bytes\": " + rss + ", \"notes\": " + json(notes()) + "}");
    }
    reader.close();
    System.err.printf("[lucene] p50 k10 %s%n", stats(l10));
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> a = parse(args);
    switch (a.get("phase")) {
      case "build": build(a); break;
      case "search": searchPhase(a); break;
      default: throw new IllegalArgumentException("phase: build | search");
    }
  }
}
