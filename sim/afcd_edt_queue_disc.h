/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * afcd_edt_queue_disc.h - the EDT backend in ns-3: every packet that
 * reaches the bottleneck goes through the datapath's own afcd_egress
 * (sim/afcd_drive.h: BPF_PROG_TEST_RUN on the simulation's clock), which
 * drops it, admits it with the departure time it stamps, or admits it
 * with CE set; the queue disc then holds each admitted packet until its
 * departure time, as sch_fq holds a packet until skb->tstamp (the
 * departures of one virtual FIFO never decrease, so one FIFO with a timer
 * for its head enforces them). The refresh step runs every update_period
 * and the loader's scan every AFCD_SCAN_PERIOD_NS and its GC of flow
 * state idle for AFCD_GC_IDLE_NS every AFCD_GC_PERIOD_NS, on the
 * simulation's clock, as the kernel timer and the loader run them.
 */
#ifndef AFCD_SIM_EDT_QUEUE_DISC_H
#define AFCD_SIM_EDT_QUEUE_DISC_H

#include <deque>
#include <string>
#include <vector>

#include "ns3/event-id.h"
#include "ns3/queue-disc.h"

struct afcd_drive;

namespace ns3 {

class AfcdEdtQueueDisc : public QueueDisc
{
  public:
    static TypeId GetTypeId();
    AfcdEdtQueueDisc();
    ~AfcdEdtQueueDisc() override;

    /* Load the programs with the loader's parameters (name, value, ...)
     * and seed, and start the refresh step and the scan. Throws
     * std::runtime_error with the reason. */
    void Configure(const std::vector<std::string>& params, uint64_t seed);
    struct afcd_drive* Drive() const { return m_drive; }
    /* Bytes held (admitted, not yet departed). */
    uint64_t HeldBytes() const { return m_heldBytes; }

    /* Churn: the datagrams to UDP port (1 .. 65535) are seen by the
     * program as the next of flows flows (1 .. 2^24), cycled: source
     * 198.19.0.0 + (k >> 16), source port k & 0xffff, as the closed
     * loop's churn source (tests/bpf/loop.h); the packet itself is left
     * as it is. One ns-3 sender stands for a crowd of one-datagram flows
     * that would cost a socket each. port 0: none. */
    void SetChurn(uint16_t port, uint32_t flows);

    /* The simulation's time on the programs' clock, ns (never 0). */
    static uint64_t ClockNs();

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override;
    Ptr<QueueDiscItem> DoDequeue() override;
    bool CheckConfig() override;
    void InitializeParams() override;
    void DoDispose() override;
    void Refresh();
    void Scan();
    void Gc();
    void Release();

    struct afcd_drive* m_drive{nullptr};
    std::deque<uint64_t> m_departures; // departure time of each held packet, FIFO
    uint64_t m_heldBytes{0};
    uint16_t m_churnPort{0};
    uint32_t m_churnFlows{1}, m_churnNext{0};
    EventId m_release, m_refresh, m_scan, m_gc;
    Time m_updatePeriod;
};

} // namespace ns3

#endif /* AFCD_SIM_EDT_QUEUE_DISC_H */
