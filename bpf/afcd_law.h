/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * afcd_law.h - the decision logic of AFCD/FaLL as pure arithmetic, one
 * header a topic: afcd_edt.h (the EDT virtual queue), afcd_codel.h (CoDel),
 * afcd_fair.h (the fairness module: target_i, sampling, estimators, FaLL,
 * the policer), afcd_flowid.h (the keyed flow id), over afcd_arith.h. No
 * helpers, no maps, no loops without a constant bound: the same code is
 * compiled into the BPF program (always_inline) and into host unit tests
 * (tests/unit/test_law.c).
 */
#ifndef AFCD_LAW_H
#define AFCD_LAW_H

#include "afcd_arith.h"
#include "afcd_edt.h"
#include "afcd_codel.h"
#include "afcd_fair.h"
#include "afcd_flowid.h"

#endif /* AFCD_LAW_H */
