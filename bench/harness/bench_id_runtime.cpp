// `bigstep-bench id-runtime` (bench/harness/bench_id_runtime.h). The spider (configs/quadruped_spider.yaml,
// 42 kg, 18 DOF) standing with its feet on the ground, q̈_des = 0 plus a small random joint velocity
// plan (seeded); each foot's contact point is multiplied c times (the paper's Fig. 19 setup:
// "contacts artificially multiplied per foot"; the copies' normal rows perturbed by 2e-3 so that
// they are distinct), n = 4c contacts. Per model (id_lcp_inf, id_lcp_mu, id_qp_mu,
// id_qp_inf) and n: the median thread CPU time of one id_solve over R repetitions (warm start carried
// between repetitions, as in a control loop), the pivots / QP iterations and the status.
#include "bench/harness/bench_id_runtime.h"

#include <algorithm>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "io/scene.h"
#include "control/inverse_dynamics/id_problem.h"

namespace bigstep {

namespace {
// this thread's CPU time [s]: a solve preempted on a loaded machine does not count its wait
double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}
}  // namespace

int bench_id_runtime(const std::vector<std::string>& args) {
  const std::string usage = std::string("usage: bigstep-bench id-runtime [options]\n") +
                            "  id-runtime [--out DIR] [--reps R] [--max-per-foot C]   ID solve time vs contacts (Fig. 19)\n";
  std::string out = "out/bench";
  int reps = 200, cmax = 10;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      std::fputs(usage.c_str(), stdout);
      return 0;
    }
    if (args[i] == "--out" && i + 1 < args.size()) out = args[++i];
    else if (args[i] == "--reps" && i + 1 < args.size()) reps = std::atoi(args[++i].c_str());
    else if (args[i] == "--max-per-foot" && i + 1 < args.size()) cmax = std::atoi(args[++i].c_str());
    else {
      std::fprintf(stderr, "bigstep-bench id-runtime: unknown option '%s'\n%s", args[i].c_str(), usage.c_str());
      return 2;
    }
  }
  if (reps < 1 || cmax < 1 || cmax > 64) {
    std::fprintf(stderr, "bigstep-bench id-runtime: --reps (%d) must be >= 1 and --max-per-foot (%d) in [1, 64]\n%s", reps,
                 cmax, usage.c_str());
    return 2;
  }
  const Scene sc = load_scene(std::string(BIGSTEP_SOURCE_DIR) + "/configs/quadruped_spider.yaml");
  const Model& m = sc.model;
  const double dt = 1e-3;
  IdTerms terms(m);
  terms.update(m, sc.theta0, VecX::Zero(m.n_q), dt, 0.7, 0.05);
  const int n0 = terms.n;
  const std::vector<int> act = id_actuated_dofs(m);
  const int nq = int(act.size());
  std::filesystem::create_directories(out);
  const std::string path = out + "/id_runtime.csv";
  std::ofstream f(path);
  f << "model,contacts,per_foot,median_s,min_s,iterations,status\n";
  const IdKind kinds[] = {IdKind::LcpInf, IdKind::LcpMu, IdKind::QpMu, IdKind::QpInf};
  std::mt19937 rng(19);
  std::uniform_real_distribution<double> U(-1, 1);
  VecX qdot(nq);
  for (int j = 0; j < nq; ++j) qdot[j] = 0.01 * U(rng);
  for (int c = 1; c <= cmax; ++c) {
    const int n = n0 * c;
    MatX N(n, m.n_q), S(n, m.n_q), T(n, m.n_q);
    VecX phi = VecX::Zero(n), mu = VecX::Constant(n, 0.7);
    std::vector<int> ids(static_cast<size_t>(n));
    for (int i = 0; i < n0; ++i) {
      for (int k = 0; k < c; ++k) {
        // copy k of foot i: the foot's rows; copies k > 0 get a perturbation of 2e-3 on the normal
        // row's base-rotation entries along angle 2 pi k / c, standing for distinct points ~2 mm
        // apart (exact duplicates are the App. F extreme; the perturbation keeps them distinct)
        const int row = i * c + k;
        N.row(row) = terms.N.row(i);
        S.row(row) = terms.S.row(i);
        T.row(row) = terms.T.row(i);
        if (k > 0) {
          const double a = 2 * M_PI * k / c, e = 2e-3;
          const double ex = e * std::cos(a), ey = e * std::sin(a);
          N(row, 3) += ey;
          N(row, 4) -= ex;
        }
        ids[size_t(row)] = row;
      }
    }
    IdWorkspace ws(m.n_q, act, n);
    IdResult res;
    ws.init_result(res);
    for (IdKind kind : kinds) {
      const IdProblem p{terms.M, terms.kappa, qdot, N, S, T, phi, mu, dt, ids};
      std::vector<double> t(static_cast<size_t>(reps));
      for (int r = 0; r < reps; ++r) {
        const double t0 = thread_cpu_s();
        id_solve(kind, p, ws, res);
        t[size_t(r)] = thread_cpu_s() - t0;
      }
      std::sort(t.begin(), t.end());
      f << id_kind_name(kind) << "," << n << "," << c << "," << t[t.size() / 2] << "," << t.front() << ","
        << res.iterations << "," << res.status << "\n";
      std::fprintf(stderr, "\r%s n = %d: %.1f us   ", id_kind_name(kind), n, 1e6 * t[t.size() / 2]);
    }
  }
  std::fprintf(stderr, "\nwrote %s\n", path.c_str());
  return 0;
}

}  // namespace bigstep
