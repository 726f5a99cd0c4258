// Reference timings of Pinocchio (C++) on the models of urdf/, for comparison with
// `cargo bench --bench rigid` under the same machine load. Offline tool, not built by cargo.
//
// Setup (Python packages only as tools): pip install pin cmeel-eigen
//   python3 -c "import pinocchio as pin; [ (pin.buildModelFromUrdf(f'urdf/{f}.urdf', *( [pin.JointModelFreeFlyer()] if ff else [] ))).saveToBinary(f'/tmp/{n}.bin') for n, f, ff in [('ur5', 'ur5', 0), ('quadruped', 'quadruped', 1), ('humanoid', 'humanoid', 1), ('ur5_real', 'real/ur5_robot', 0), ('go1', 'real/go1', 1)] ]"
//   (python3 being the venv's: python3 -m venv /tmp/pinenv && /tmp/pinenv/bin/pip install pin==4.1.0 cmeel-eigen)
//   P=$(python3 -c "import cmeel, os; print(os.path.join(os.path.dirname(cmeel.__path__[0]), 'cmeel.prefix'))")
//   g++ -O3 -DNDEBUG -std=c++17 -DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS -DBOOST_MPL_LIMIT_LIST_SIZE=30 \
//     -DBOOST_MPL_LIMIT_VECTOR_SIZE=30 -DBOOST_FUSION_INVOKE_MAX_ARITY=12 -I$P/include -I$P/include/eigen3 \
//     benches/pinocchio_reference.cpp -L$P/lib -lpinocchio_default -lboost_serialization -lboost_filesystem \
//     -Wl,-rpath,$P/lib -o /tmp/pinocchio_reference
//   /tmp/pinocchio_reference /tmp/ur5.bin time 0     (median ns per call)
//   /tmp/pinocchio_reference /tmp/ur5.bin crba 1000  (a loop, e.g. for valgrind instruction counts)
#include <pinocchio/multibody.hpp>
#include <pinocchio/serialization.hpp>

#include <pinocchio/algorithm/joint-configuration.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/aba-derivatives.hpp>
#include <chrono>
#include <algorithm>
#include <iostream>
#include <vector>
using namespace pinocchio;
template <class F> double median_ns(F f) {
  std::vector<double> t;
  for (int r = 0; r < 41; ++r) {
    int n = 2000;
    auto a = std::chrono::high_resolution_clock::now();
    for (int i = 0; i < n; ++i) f();
    auto b = std::chrono::high_resolution_clock::now();
    t.push_back(std::chrono::duration<double, std::nano>(b - a).count() / n);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
int main(int argc, char** argv) {
  Model model;
  model.loadFromBinary(argv[1]);
  Data data(model);
  std::srand(1);
  Eigen::VectorXd d = Eigen::VectorXd::Random(model.nv);
  Eigen::VectorXd q = integrate(model, neutral(model), d);
  Eigen::VectorXd v = Eigen::VectorXd::Random(model.nv), a = Eigen::VectorXd::Random(model.nv), tau = Eigen::VectorXd::Random(model.nv);
  std::string alg = argv[2];
  int n = std::atoi(argv[3]);
  double sink = 0;
  for (int i = 0; i < n; ++i) {
    if (alg == "crba") { crba(model, data, q); sink += data.M(0, 0); }
    else if (alg == "rnea") { rnea(model, data, q, v, a); sink += data.tau[0]; }
    else if (alg == "aba") { aba(model, data, q, v, tau); sink += data.ddq[0]; }
    else if (alg == "abad") { computeABADerivatives(model, data, q, v, tau); sink += data.ddq_dq(0, 0); }
  }
  std::cout << sink << "\n";
  if (alg == "time") {
    std::cout << " rnea " << median_ns([&] { rnea(model, data, q, v, a); })
      << " crba " << median_ns([&] { crba(model, data, q); })
      << " aba " << median_ns([&] { aba(model, data, q, v, tau); })
      << " aba_derivatives " << median_ns([&] { computeABADerivatives(model, data, q, v, tau); }) << " ns\n";
  }
}
