/* keys.h: the wire keys of protocol/agent_keys.h, by short name, for the
 * agent's printf formats: WK(TS) is "ts", WS(PY) is "py", WT(DELTA) is
 * "delta". No literal key is written anywhere else in the agent, so that a
 * key the server does not know cannot be emitted (tests/run agent_keys).
 * Header only, layer 0. */
#ifndef HOTLINE_KEYS_H
#define HOTLINE_KEYS_H

#include "agent_keys.h"

#define WK(k) agent_key_name(AGENT_KEY_##k)
#define WS(s) agent_stat_wire(AGENT_STAT_##s)
#define WT(p) agent_place_type(AGENT_IN_##p)

#endif
