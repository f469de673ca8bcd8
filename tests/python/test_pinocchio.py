"""External oracle: bigstep's CRBA H and RNEA tau against Pinocchio (pip `pin`) to 1e-9.

The model is rebuilt in Pinocchio from `bigstep inspect`'s JSON: every elementary DOF of a joint
(docs/methods/pbfd.md §2.1) becomes a Pinocchio RevoluteUnaligned / PrismaticUnaligned joint, massless between
DOFs, so Pinocchio's q and v are exactly bigstep's theta and theta_dot.
"""
import json

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio", reason="pip package `pin` not installed (scripts/setup.sh installs it)")


def build_pinocchio(desc):
    model = pin.Model()
    model.gravity.linear = np.array(desc["gravity"])
    frame_of = []  # per link: (pinocchio joint id, placement of the link frame in that joint)
    for link in desc["links"]:
        parent = link["parent"]
        jid, M = (0, pin.SE3.Identity()) if parent < 0 else frame_of[parent]
        M = M * pin.SE3(np.array(link["R_o"]), np.array(link["t_o"]))
        for k in range(link["dof_adr"], link["dof_adr"] + link["dof_num"]):
            dof = desc["dofs"][k]
            axis = np.array(dof["axis"])
            jm = pin.JointModelRevoluteUnaligned(axis) if dof["revolute"] else pin.JointModelPrismaticUnaligned(axis)
            jid = model.addJoint(jid, jm, M, dof["name"])
            M = pin.SE3.Identity()
        inertia = pin.Inertia(link["mass"], np.array(link["com"]), np.array(link["inertia"]))
        model.appendBodyToJoint(jid, inertia, M)
        frame_of.append((jid, M))
    assert model.nq == desc["n_q"] and model.nv == desc["n_q"]
    return model


@pytest.mark.parametrize("config", ["configs/chain_fixed.yaml", "configs/chain_floating_ground.yaml",
                                    "configs/box_slide.yaml", "tests/data/tree_all_joints.yaml"])
def test_mass_matrix_and_rnea_match_pinocchio(bigstep, config):
    p = bigstep("inspect", config, "--states", "5", "--seed", "42", check=0)
    desc = json.loads(p.stdout)
    model = build_pinocchio(desc)
    data = model.createData()
    for st in desc["states"]:
        q, v, a = (np.array(st[k]) for k in ("q", "qd", "qdd"))
        M = pin.crba(model, data, q)
        M = np.triu(M) + np.triu(M, 1).T
        H = np.array(st["H"])
        assert np.abs(H - M).max() <= 1e-9 * max(1.0, np.abs(M).max())
        tau = pin.rnea(model, data, q, v, a)
        assert np.abs(np.array(st["tau"]) - tau).max() <= 1e-9 * max(1.0, np.abs(tau).max())
