// mtb.cc - the C API of mtb.h over Google Benchmark (>= 1.7).
//
// An mtb_state* is the benchmark::State* itself, an mtb_bench* the
// benchmark::internal::Benchmark* of the registry: no state of our own.
// mtb_main wraps the console/JSON reporters so that benchmark names are
// reported exactly as registered (see mtb.h).
#include "mtb.h"

#include <benchmark/benchmark.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

benchmark::State &S(mtb_state *st) { return *reinterpret_cast<benchmark::State *>(st); }
const benchmark::State &S(const mtb_state *st) {
  return *reinterpret_cast<const benchmark::State *>(st);
}
benchmark::internal::Benchmark *B(mtb_bench *b) {
  return reinterpret_cast<benchmark::internal::Benchmark *>(b);
}
mtb_bench *H(benchmark::internal::Benchmark *b) { return reinterpret_cast<mtb_bench *>(b); }

// Forwards to an inner reporter with the time-type / iteration / min-time
// segments removed from every run's name, so a benchmark is reported under
// the name it was registered with.
class CleanNames : public benchmark::BenchmarkReporter {
 public:
  explicit CleanNames(benchmark::BenchmarkReporter *inner) : inner_(inner) {}
  bool ReportContext(const Context &context) override {
    // Google Benchmark points *our* streams at the output file: pass them on.
    inner_->SetOutputStream(&GetOutputStream());
    inner_->SetErrorStream(&GetErrorStream());
    return inner_->ReportContext(context);
  }
  void ReportRuns(const std::vector<Run> &runs) override {
    std::vector<Run> clean(runs);
    for (Run &r : clean) {
      r.run_name.min_time.clear();
      r.run_name.min_warmup_time.clear();
      r.run_name.iterations.clear();
      r.run_name.repetitions.clear();
      r.run_name.time_type.clear();
    }
    inner_->ReportRuns(clean);
  }
  void Finalize() override { inner_->Finalize(); }

 private:
  std::unique_ptr<benchmark::BenchmarkReporter> inner_;
};

// The value of the last --<flag>=<v> in argv, or dflt.
std::string last_flag(int argc, char **argv, const char *flag, const char *dflt) {
  std::string v = dflt, pre = std::string("--") + flag + "=";
  for (int i = 1; i < argc; i++)
    if (std::strncmp(argv[i], pre.c_str(), pre.size()) == 0) v = argv[i] + pre.size();
  return v;
}

// A clean-name reporter for format, or nullptr where Google Benchmark's own
// reporter should be used (csv: deprecated upstream, names left as they are).
benchmark::BenchmarkReporter *make_reporter(const std::string &format, bool console_color) {
  if (format == "json") return new CleanNames(new benchmark::JSONReporter());
  if (format == "console")
    return new CleanNames(new benchmark::ConsoleReporter(
        console_color ? benchmark::ConsoleReporter::OO_Color : benchmark::ConsoleReporter::OO_None));
  return nullptr;
}

// The machine's load at one instant, read from /proc without allocating:
// procs_running (/proc/stat: runnable tasks, this thread included) and the
// 1-minute load average (/proc/loadavg); -1 where the file or the field is
// missing. /proc/stat's intr line can be long: it is scanned in chunks.
struct Load {
  double running = -1, load1 = -1;
};

double parse_num(const char *p) {
  char *end;
  double v = std::strtod(p, &end);
  return end == p ? -1 : v;
}

// Threads of this process other than the caller that are runnable now (state
// R in /proc/self/task/<tid>/stat): OpenMP workers of the last parallel region
// still spinning, which /proc/stat's procs_running counts too but which are no
// neighbour. getdents64 into a stack buffer: no allocation.
int own_running_others() {
  int dfd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return 0;
  long self = syscall(SYS_gettid);
  int count = 0;
  alignas(8) char buf[4096];
  for (;;) {
    long k = syscall(SYS_getdents64, dfd, buf, sizeof buf);
    if (k <= 0) break;
    for (long off = 0; off < k;) {
      auto *d = reinterpret_cast<struct dirent64 *>(buf + off);
      off += d->d_reclen;
      char *end;
      long tid = std::strtol(d->d_name, &end, 10);
      if (*end || end == d->d_name || tid == self) continue;
      char path[64], st[512];
      std::snprintf(path, sizeof path, "/proc/self/task/%ld/stat", tid);
      int fd = open(path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      ssize_t n = read(fd, st, sizeof st - 1);
      close(fd);
      if (n <= 0) continue;
      st[n] = 0;
      const char *paren = std::strrchr(st, ')');  // the state follows "(comm) "
      if (paren && paren[1] == ' ' && paren[2] == 'R') count++;
    }
  }
  close(dfd);
  return count;
}

Load read_load() {
  Load l;
  char buf[4096 + 1];
  int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t k = read(fd, buf, sizeof buf - 1);
    if (k > 0) buf[k] = 0, l.load1 = parse_num(buf);
    close(fd);
  }
  fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return l;
  static const char key[] = "\nprocs_running ";
  const size_t klen = sizeof key - 1, keep = 64;
  size_t have = 0;
  for (;;) {
    ssize_t k = read(fd, buf + have, sizeof buf - 1 - have);
    if (k <= 0) break;
    have += (size_t)k;
    buf[have] = 0;
    const char *hit = std::strstr(buf, key);
    if (hit && std::strchr(hit + klen, '\n')) {
      l.running = parse_num(hit + klen);
      break;
    }
    if (hit) {  // the number may continue in the next chunk: keep it whole
      size_t off = (size_t)(hit - buf);
      std::memmove(buf, hit, have - off);
      have -= off;
    } else if (have > keep) {  // keep a tail that may hold the key's beginning
      std::memmove(buf, buf + have - keep, keep);
      have = keep;
    }
  }
  close(fd);
  if (l.running >= 1) l.running -= own_running_others();
  return l;
}

}  // namespace

extern "C" {

mtb_bench *mtb_register(const char *name, mtb_fn fn, void *user) {
  if (!name || !fn) return nullptr;
  // Every run records the machine's load at its start, before the
  // benchmark's own setup and timed loop, while only this thread runs:
  // load_others = runnable tasks other than this process's (a neighbour that
  // wants a core; procs_running - 1, less our own threads still runnable),
  // load1 = the 1-minute load average. A missing /proc file leaves its
  // counter out.
  return H(benchmark::RegisterBenchmark(name, [fn, user](benchmark::State &st) {
    Load l = read_load();
    fn(reinterpret_cast<mtb_state *>(&st), user);
    if (l.running >= 1) st.counters["load_others"] = benchmark::Counter(l.running - 1);
    if (l.load1 >= 0) st.counters["load1"] = benchmark::Counter(l.load1);
  }));
}

mtb_bench *mtb_args(mtb_bench *b, const int64_t *args, int n) {
  if (b && args && n > 0) B(b)->Args(std::vector<int64_t>(args, args + n));
  return b;
}

mtb_bench *mtb_flags(mtb_bench *b, unsigned flags) {
  if (!b) return b;
  if (flags & MTB_REAL_TIME) B(b)->UseRealTime();
  if (flags & MTB_MANUAL_TIME) B(b)->UseManualTime();
  if (flags & MTB_PROCESS_CPU_TIME) B(b)->MeasureProcessCPUTime();
  return b;
}

mtb_bench *mtb_fixed_iterations(mtb_bench *b, int64_t n) {
  if (b && n > 0) B(b)->Iterations(n);
  return b;
}

mtb_bench *mtb_min_time(mtb_bench *b, double seconds) {
  if (b && seconds > 0) B(b)->MinTime(seconds);
  return b;
}

mtb_bench *mtb_repetitions(mtb_bench *b, int n) {
  if (b && n > 0) B(b)->Repetitions(n);
  return b;
}

mtb_bench *mtb_unit(mtb_bench *b, int unit) {
  static const benchmark::TimeUnit units[] = {benchmark::kNanosecond, benchmark::kMicrosecond,
                                              benchmark::kMillisecond, benchmark::kSecond};
  if (b && unit >= MTB_NS && unit <= MTB_S) B(b)->Unit(units[unit]);
  return b;
}

void mtb_context(const char *key, const char *value) {
  if (key && value) benchmark::AddCustomContext(key, value);
}

int mtb_loop(mtb_state *st) { return S(st).KeepRunning() ? 1 : 0; }
int64_t mtb_arg(const mtb_state *st, int i) { return S(st).range(static_cast<std::size_t>(i)); }
int64_t mtb_iterations(const mtb_state *st) { return static_cast<int64_t>(S(st).iterations()); }
void mtb_pause(mtb_state *st) { S(st).PauseTiming(); }
void mtb_resume(mtb_state *st) { S(st).ResumeTiming(); }
void mtb_set_iteration_time(mtb_state *st, double seconds) { S(st).SetIterationTime(seconds); }

void mtb_counter(mtb_state *st, const char *name, double value, unsigned flags) {
  if (!name) return;
  int f = benchmark::Counter::kDefaults;
  if (flags & MTB_COUNTER_RATE) f |= benchmark::Counter::kIsRate;
  if (flags & MTB_COUNTER_PER_ITER) f |= benchmark::Counter::kAvgIterations;
  S(st).counters[name] = benchmark::Counter(
      value, static_cast<benchmark::Counter::Flags>(f),
      (flags & MTB_COUNTER_1024) ? benchmark::Counter::kIs1024 : benchmark::Counter::kIs1000);
}

void mtb_set_bytes_processed(mtb_state *st, int64_t bytes) { S(st).SetBytesProcessed(bytes); }
void mtb_set_items_processed(mtb_state *st, int64_t items) { S(st).SetItemsProcessed(items); }
void mtb_label(mtb_state *st, const char *label) { S(st).SetLabel(label ? label : ""); }
void mtb_skip(mtb_state *st, const char *msg) { S(st).SkipWithError(msg ? msg : "skipped"); }
int mtb_skipped(const mtb_state *st) { return S(st).error_occurred() ? 1 : 0; }

int mtb_main(int argc, char **argv) {
  // Read the output flags before Initialize consumes them.
  std::string display_fmt = last_flag(argc, argv, "benchmark_format", "console");
  std::string out = last_flag(argc, argv, "benchmark_out", "");
  std::string out_fmt = last_flag(argc, argv, "benchmark_out_format", "json");
  std::string color = last_flag(argc, argv, "benchmark_color", "auto");
  bool tty = isatty(STDOUT_FILENO) != 0;
  bool use_color = color == "true" || color == "yes" || color == "1" ||
                   ((color == "auto") && tty);

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::unique_ptr<benchmark::BenchmarkReporter> display(make_reporter(display_fmt, use_color));
  std::unique_ptr<benchmark::BenchmarkReporter> file;
  if (!out.empty()) file.reset(make_reporter(out_fmt, false));
  if (!file && !out.empty()) {
    // Google Benchmark makes its own file reporter when it gets none.
    benchmark::RunSpecifiedBenchmarks(display.get());
  } else {
    benchmark::RunSpecifiedBenchmarks(display.get(), file.get());
  }
  benchmark::Shutdown();
  return 0;
}

}  // extern "C"
