// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The EDT backend in ns-3; see afcd_edt_queue_disc.h. */
#include "afcd_edt_queue_disc.h"

#include <cstring>
#include <stdexcept>

#include "ns3/drop-tail-queue.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

extern "C" {
#include "afcd_drive.h"
}

namespace ns3 {

NS_LOG_COMPONENT_DEFINE("AfcdEdtQueueDisc");
NS_OBJECT_ENSURE_REGISTERED(AfcdEdtQueueDisc);

/* The programs' clock starts a second before the simulation's, so that
 * its first packet is never at 0 (a clock that never started). */
static const uint64_t kClockBaseNs = 1000000000ULL;
/* Ethernet, IPv4 and the first bytes of TCP or UDP: what the parser reads. */
static const uint32_t kFrameLen = 14 + 20 + 20;

TypeId
AfcdEdtQueueDisc::GetTypeId()
{
    static TypeId tid = TypeId("ns3::AfcdEdtQueueDisc")
                            .SetParent<QueueDisc>()
                            .SetGroupName("TrafficControl")
                            .AddConstructor<AfcdEdtQueueDisc>();
    return tid;
}

AfcdEdtQueueDisc::AfcdEdtQueueDisc()
    : QueueDisc(QueueDiscSizePolicy::NO_LIMITS)
{
}

AfcdEdtQueueDisc::~AfcdEdtQueueDisc()
{
    afcd_drive_close(m_drive);
}

uint64_t
AfcdEdtQueueDisc::ClockNs()
{
    return kClockBaseNs + Simulator::Now().GetNanoSeconds();
}

void
AfcdEdtQueueDisc::Configure(const std::vector<std::string>& params, uint64_t seed)
{
    std::vector<const char*> kv;
    char err[256];

    for (const auto& p : params)
        kv.push_back(p.c_str());
    m_drive = afcd_drive_open(kv.data(), static_cast<int>(kv.size()), seed, err, sizeof(err));
    if (!m_drive)
        throw std::runtime_error(err);
    m_updatePeriod = NanoSeconds(afcd_drive_update_period_ns(m_drive));
    m_refresh = Simulator::ScheduleNow(&AfcdEdtQueueDisc::Refresh, this);
    m_scan = Simulator::ScheduleNow(&AfcdEdtQueueDisc::Scan, this);
    m_gc = Simulator::Schedule(NanoSeconds(afcd_drive_gc_period_ns()), &AfcdEdtQueueDisc::Gc,
                               this);
}

void
AfcdEdtQueueDisc::Refresh()
{
    afcd_drive_refresh(m_drive, ClockNs());
    m_refresh = Simulator::Schedule(m_updatePeriod, &AfcdEdtQueueDisc::Refresh, this);
}

void
AfcdEdtQueueDisc::Scan()
{
    afcd_drive_scan(m_drive, ClockNs());
    m_scan = Simulator::Schedule(NanoSeconds(afcd_drive_scan_period_ns()),
                                 &AfcdEdtQueueDisc::Scan, this);
}

void
AfcdEdtQueueDisc::Gc()
{
    afcd_drive_gc(m_drive, ClockNs(), afcd_drive_gc_idle_ns());
    m_gc = Simulator::Schedule(NanoSeconds(afcd_drive_gc_period_ns()), &AfcdEdtQueueDisc::Gc,
                               this);
}

/* The frame afcd_egress parses: Ethernet (IPv4), the IPv4 header as it is
 * (its ECN field included) and the first bytes of the L4 header (the ports). */
static void
FrameOf(Ptr<const Ipv4QueueDiscItem> item, uint8_t* f)
{
    const Ipv4Header& h = item->GetHeader();
    uint8_t l4[20] = {0};
    uint32_t tot = item->GetSize();

    std::memset(f, 0, kFrameLen);
    f[12] = 0x08; // EtherType IPv4
    f[14] = 0x45;
    f[15] = static_cast<uint8_t>((h.GetDscp() << 2) | h.GetEcn());
    f[16] = static_cast<uint8_t>(tot >> 8);
    f[17] = static_cast<uint8_t>(tot);
    f[22] = h.GetTtl();
    f[23] = h.GetProtocol();
    h.GetSource().Serialize(f + 26);
    h.GetDestination().Serialize(f + 30);
    item->GetPacket()->CopyData(l4, sizeof(l4));
    std::memcpy(f + 34, l4, sizeof(l4));
}

void
AfcdEdtQueueDisc::SetChurn(uint16_t port, uint32_t flows)
{
    if (flows < 1 || flows > (1u << 24))
        throw std::runtime_error("churn: flows must be 1 .. 2^24");
    m_churnPort = port;
    m_churnFlows = flows;
    m_churnNext = 0;
}

bool
AfcdEdtQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
    Ptr<Ipv4QueueDiscItem> ip = DynamicCast<Ipv4QueueDiscItem>(item);
    uint8_t frame[kFrameLen];
    __u64 tdep = 0;
    int verdict;

    if (!ip)
    {
        DropBeforeEnqueue(item, "not IPv4");
        return false;
    }
    FrameOf(ip, frame);
    if (m_churnPort && frame[23] == 17 && frame[36] == (m_churnPort >> 8) &&
        frame[37] == (m_churnPort & 0xff))
    {
        uint32_t k = m_churnNext;
        m_churnNext = (k + 1) % m_churnFlows;
        frame[26] = 198;
        frame[27] = 19;
        frame[28] = 0;
        frame[29] = static_cast<uint8_t>(k >> 16);
        frame[34] = static_cast<uint8_t>(k >> 8);
        frame[35] = static_cast<uint8_t>(k);
    }
    verdict = afcd_drive_egress(m_drive, ClockNs(), frame, kFrameLen, 14 + item->GetSize(),
                                &tdep);
    if (verdict != 0)
    {
        DropBeforeEnqueue(item, verdict > 0 ? "afcd" : "afcd error");
        return false;
    }
    if ((frame[15] & 3) == 3 && ip->GetHeader().GetEcn() != Ipv4Header::ECN_CE)
        ip->Mark();
    if (!GetInternalQueue(0)->Enqueue(item))
        return false; // counted by the internal queue's drop trace
    m_departures.push_back(tdep);
    m_heldBytes += item->GetSize();
    return true;
}

void
AfcdEdtQueueDisc::Release()
{
    Run();
}

Ptr<QueueDiscItem>
AfcdEdtQueueDisc::DoDequeue()
{
    if (m_departures.empty())
        return nullptr;
    uint64_t now = ClockNs(), t = m_departures.front();
    if (t > now)
    {
        /* sch_fq's watchdog: the head leaves at its departure time */
        Time at = Simulator::Now() + NanoSeconds(t - now);
        if (!m_release.IsPending() || m_release.GetTs() > static_cast<uint64_t>(at.GetTimeStep()))
        {
            m_release.Cancel();
            m_release =
                Simulator::Schedule(NanoSeconds(t - now), &AfcdEdtQueueDisc::Release, this);
        }
        return nullptr;
    }
    Ptr<QueueDiscItem> item = GetInternalQueue(0)->Dequeue();
    m_departures.pop_front();
    if (item)
        m_heldBytes -= item->GetSize();
    return item;
}

bool
AfcdEdtQueueDisc::CheckConfig()
{
    if (GetNQueueDiscClasses() || GetNPacketFilters())
        return false;
    if (!GetNInternalQueues())
        AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
            "MaxSize", QueueSizeValue(QueueSize("1000000p"))));
    return GetNInternalQueues() == 1;
}

void
AfcdEdtQueueDisc::InitializeParams()
{
}

void
AfcdEdtQueueDisc::DoDispose()
{
    m_release.Cancel();
    m_refresh.Cancel();
    m_scan.Cancel();
    m_gc.Cancel();
    QueueDisc::DoDispose();
}

} // namespace ns3
