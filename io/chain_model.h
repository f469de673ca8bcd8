// The fixed chain of configs/chain_fixed.yaml with any number of links (docs/methods/pbfd.md §8.5: D = L),
// for size sweeps (Fig. 8 vs |theta|) and tests of long chains.
#pragma once
#include "core/model.h"

namespace bigstep {

/// L box links 0.2 x 0.04 x 0.04 m (0.32 kg), hinges alternating about y and z, root at 2.5 m.
Model fixed_chain_model(int L);

}  // namespace bigstep
