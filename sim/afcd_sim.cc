// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * afcd-sim - one run of a dissertation figure's workload in ns-3 (3.44),
 * with the bottleneck either the datapath's own EDT program
 * (AfcdEdtQueueDisc: afcd_egress on the simulation's clock) or one of
 * ns-3's queue discs. The run is described on stdin, one item a line, as
 * testbed/ns3.py writes it; the result is one JSON object on stdout, in the
 * shape of the VM runner's run results (testbed/scenario.py), so that one
 * judge reads both.
 *
 *   seed N                 the programs' and ns-3's random streams
 *   topology dumbbell|yshape|tree   senders N
 *   receivers M            the dumbbell's receiver hosts (1): with M > 1
 *                          the bottleneck ends at a switch with M hosts
 *                          behind it at A, TCP flow i on host i % M
 *                          (crowds: ns-3's endpoint demux walks a list
 *                          per packet, O(sockets on the node))
 *   rate_mbit R  rtt_ms T  duration_s D  warmup_s W
 *   access_mbit A          the senders' (and leaves') links (0: 10 x R)
 *   rto_min_ms M  ecn 0|1  sndbuf_bytes B  sack 0|1 (1)
 *   delack_ms T            the delayed-ACK timeout (default min(40, M / 4))
 *   mtu BYTES              the IP MTU of every link (1500; 9000 the text's)
 *   bottleneck bpf         + lines "param NAME VALUE" (the loader's)
 *   bottleneck ns3 TYPEID  + lines "attr NAME VALUE" (the queue disc's)
 *   default NAME VALUE     an attribute's default (Config::SetDefault), for
 *                          objects a queue disc makes itself (FqCoDel's
 *                          per-flow CoDels)
 *   flow NAME GROUP SENDER CC PROTO RATE_MBIT START_S
 *        CC: cubic, reno, highspeed, dctcp, bbr; PROTO tcp, udp or churn
 *        (64-byte UDP frames the bpf bottleneck sees as churn_flows
 *        one-datagram flows cycled: AfcdEdtQueueDisc::SetChurn)
 *   churn_flows N          (1)
 *   param flow-table N     last of the params: the flow table's size
 *   short T_S BYTES DIR SENDER     one short TCP flow (DIR U: sender to
 *                                  receiver; D: back), FCT recorded
 *   short_ports N          the short flows' client ports: the first N of
 *                          49152-65535 (16384, all of them)
 *   tcp_series 0|1         cwnd and srtt of every TCP flow every 0.5 s
 *
 * Links: senders (and the tree's leaves) at A; the bottleneck, the router's
 * egress to the receiver, at R with the base RTT's propagation delay, its
 * device queue one packet (the queue disc holds the backlog); Linux's
 * TCP settings where ns-3's differ (MinRto 200 ms unless given, SACK,
 * MSS 1448, delayed ACKs of 2). Every load stops at D.
 */
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include "afcd_edt_queue_disc.h"

extern "C" {
#include "afcd_drive.h"
}

using namespace ns3;

namespace {

/* A churn flow's frames: 64 bytes on the wire (Ethernet 14, IPv4 20, UDP 8,
 * 22 of payload). */
constexpr uint32_t kChurnFrame = 64, kChurnPayload = 22;
/* the long flows' ports at the receivers (InstallFlows); the short flows'
 * server listens at TCP 4000 */
constexpr uint16_t kFlowPort = 5000, kUdpPort = 3000;

struct FlowSpec
{
    std::string name, group, cc, proto;
    int sender{0};
    double rateMbit{0}, startS{0};
};

struct ShortSpec
{
    double t{0};
    uint64_t bytes{0};
    char dir{'U'};
    int sender{0};
};

struct Spec
{
    uint64_t seed{1};
    std::string topology{"dumbbell"};
    int senders{1};
    int receivers{1};
    double rateMbit{0}, rttMs{0}, durationS{0}, warmupS{0}, accessMbit{0}, rtoMinMs{200};
    double delAckMs{-1}; /* < 0: min(40, rto_min_ms / 4) */
    bool ecn{false}, tcpSeries{false}, sack{true};
    uint64_t sndbuf{0};
    uint32_t mtu{1500};
    uint32_t churnFlows{1}; // flows a "churn" flow's datagrams stand for (SetChurn)
    uint32_t shortPorts{16384}; // client ports of the short flows, 1-16384
    std::string bottleneck, qdiscType;
    std::vector<std::string> params;
    std::vector<std::pair<std::string, std::string>> attrs;
    std::vector<std::pair<std::string, std::string>> defaults;
    std::vector<FlowSpec> flows;
    std::vector<ShortSpec> shorts;
};

/* One line of the spec (its key k read from ls) into s. */
void
ReadItem(Spec& s, const std::string& k, std::istringstream& ls, const std::string& line)
{
    using Reader = void (*)(Spec&, std::istream&);
    static const std::map<std::string, Reader> scalar = {
        {"seed", [](Spec& s, std::istream& i) { i >> s.seed; }},
        {"topology", [](Spec& s, std::istream& i) { i >> s.topology; }},
        {"senders", [](Spec& s, std::istream& i) { i >> s.senders; }},
        {"receivers", [](Spec& s, std::istream& i) { i >> s.receivers; }},
        {"rate_mbit", [](Spec& s, std::istream& i) { i >> s.rateMbit; }},
        {"rtt_ms", [](Spec& s, std::istream& i) { i >> s.rttMs; }},
        {"duration_s", [](Spec& s, std::istream& i) { i >> s.durationS; }},
        {"warmup_s", [](Spec& s, std::istream& i) { i >> s.warmupS; }},
        {"access_mbit", [](Spec& s, std::istream& i) { i >> s.accessMbit; }},
        {"rto_min_ms", [](Spec& s, std::istream& i) { i >> s.rtoMinMs; }},
        {"delack_ms", [](Spec& s, std::istream& i) { i >> s.delAckMs; }},
        {"ecn", [](Spec& s, std::istream& i) { i >> s.ecn; }},
        {"tcp_series", [](Spec& s, std::istream& i) { i >> s.tcpSeries; }},
        {"sack", [](Spec& s, std::istream& i) { i >> s.sack; }},
        {"sndbuf_bytes", [](Spec& s, std::istream& i) { i >> s.sndbuf; }},
        {"mtu", [](Spec& s, std::istream& i) { i >> s.mtu; }},
        {"churn_flows", [](Spec& s, std::istream& i) { i >> s.churnFlows; }},
        {"short_ports", [](Spec& s, std::istream& i) { i >> s.shortPorts; }},
    };
    auto it = scalar.find(k);
    if (it != scalar.end())
        it->second(s, ls);
    else if (k == "bottleneck")
    {
        ls >> s.bottleneck;
        if (s.bottleneck == "ns3")
            ls >> s.qdiscType;
    }
    else if (k == "param")
    {
        std::string n, v;
        ls >> n >> v;
        s.params.push_back(n);
        s.params.push_back(v);
    }
    else if (k == "attr" || k == "default")
    {
        std::string n, v;
        ls >> n >> v;
        (k == "attr" ? s.attrs : s.defaults).emplace_back(n, v);
    }
    else if (k == "flow")
    {
        FlowSpec f;
        ls >> f.name >> f.group >> f.sender >> f.cc >> f.proto >> f.rateMbit >> f.startS;
        s.flows.push_back(f);
    }
    else if (k == "short")
    {
        ShortSpec f;
        ls >> f.t >> f.bytes >> f.dir >> f.sender;
        s.shorts.push_back(f);
    }
    else
        throw std::runtime_error("unknown line: " + line);
}

/* std::runtime_error naming what a read spec lacks or has out of range. */
void
CheckSpec(const Spec& s)
{
    if (s.rateMbit <= 0 || s.rttMs <= 0 || s.durationS <= 0 || s.flows.empty() ||
        s.bottleneck.empty())
        throw std::runtime_error("a spec needs rate_mbit, rtt_ms, duration_s, a bottleneck "
                                 "and flows");
    /* ns-3 sets the congestion control per node (TcpL4Protocol's
     * SocketType), read when each socket is made */
    std::map<int, std::string> ccOf;
    for (const auto& f : s.flows)
    {
        if (f.sender < 0 || f.sender >= s.senders)
            throw std::runtime_error("flow " + f.name + ": no sender " +
                                     std::to_string(f.sender));
        if (f.proto != "tcp" && f.proto != "udp" && f.proto != "churn")
            throw std::runtime_error("flow " + f.name + ": proto is tcp, udp or churn");
        if (f.proto == "tcp" && !ccOf.emplace(f.sender, f.cc).second && ccOf[f.sender] != f.cc)
            throw std::runtime_error("sender " + std::to_string(f.sender) +
                                     " has two congestion controls (one per sender in ns-3)");
    }
    if (s.receivers < 1 || (s.receivers > 1 && s.topology != "dumbbell"))
        throw std::runtime_error("receivers must be >= 1, and 1 but in a dumbbell");
    if ((s.flows.size() + s.receivers - 1) / s.receivers > 65535 - kFlowPort + 1u)
        throw std::runtime_error("too many flows for the receivers' ports (at most " +
                                 std::to_string(65535 - kFlowPort + 1) + " a receiver)");
    if (s.churnFlows < 1 || s.churnFlows > (1u << 24))
        throw std::runtime_error("churn_flows must be 1 .. 2^24");
    if (s.shortPorts < 1 || s.shortPorts > 16384)
        throw std::runtime_error("short_ports must be 1 .. 16384");
    if (s.mtu < 576 || s.mtu > 9216 || s.warmupS < 0 || s.warmupS >= s.durationS)
        throw std::runtime_error("mtu must be 576-9216 bytes and warmup_s in [0, duration_s)");
}

/* The spec on in (the format above); std::runtime_error on a line it
 * cannot read or a spec CheckSpec() refuses. */
Spec
ReadSpec(std::istream& in)
{
    Spec s;
    std::string line;
    while (std::getline(in, line))
    {
        std::istringstream ls(line);
        std::string k;
        if (!(ls >> k) || k[0] == '#')
            continue;
        ReadItem(s, k, ls, line);
        if (ls.fail())
            throw std::runtime_error("bad or missing value in: " + line);
    }
    CheckSpec(s);
    return s;
}

std::string
CcTypeId(const std::string& cc)
{
    static const std::map<std::string, std::string> m = {
        {"cubic", "ns3::TcpCubic"},
        {"reno", "ns3::TcpLinuxReno"},
        {"highspeed", "ns3::TcpHighSpeed"},
        {"dctcp", "ns3::TcpDctcp"},
        {"bbr", "ns3::TcpBbr"}};
    auto it = m.find(cc);
    if (it == m.end())
        throw std::runtime_error("unknown congestion control " + cc);
    return it->second;
}

/* The short TCP flows, in testbed/shortflows.py's protocol: the client on
 * a sender host connects to the server on the receiver and sends a header
 * of HEADER bytes (direction, size); 'U': then the file, and the server
 * answers one byte when it has all of it; 'D': the server sends the file
 * back. The FCT runs from connect() to the answer (U) or the file's last
 * byte (D) at the client, as the VM's client measures it. The server knows
 * a connection's flow by the client's address and port.
 *
 * The client picks its port as ns-3's allocator does (the next free one of
 * 49152-65535, in turn) but passes over a port whose last connection's
 * server side is still open. ns-3 3.44 leaves that side in FIN_WAIT_2 for
 * good when the client's FIN is lost: the client, in CLOSING, takes any
 * in-sequence ACK for the ACK of its FIN (TcpSocketBase::ProcessClosing)
 * and stops resending it, and FIN_WAIT_2 has no timeout. A SYN from the
 * same address and port, once the ports wrap (13 s at chapter 4's 1,235
 * flows a second), reaches that socket, which ignores it
 * (TcpSocketBase::ProcessWait), and the new flow never connects. Linux
 * resends the FIN until it is acknowledged, ends an orphan's FIN_WAIT_2
 * after tcp_fin_timeout (60 s), and answers a SYN there with an ACK
 * (RFC 5961 sec. 4) that the client, in SYN-SENT, answers with a RST
 * (RFC 9293 sec. 3.10.7.3), so the SYN it sends next connects. portsPassed
 * counts the ports passed over. */
struct ShortFlows
{
    static constexpr uint64_t HEADER = 9; /* struct "!cQ" */

    struct One
    {
        double t;
        uint64_t bytes;
        char dir;
        uint64_t sent{0}, got{0};       /* the client's */
        uint64_t srvSent{0}, srvGot{0}; /* the server's */
        bool answered{false};
        double fct{-1};
        bool srvOpen{false}; /* the server's socket accepted and not yet CLOSED */
    };

    using Peer = std::pair<uint32_t, uint16_t>; /* the client's address, port */
    std::vector<One> flows;
    std::map<Peer, size_t> byPeer;
    Ptr<Socket> listener;
    std::map<uint32_t, uint16_t> lastPort; /* per client address */
    uint64_t portsPassed{0};
    static constexpr uint16_t PORT_FIRST = 49152; /* ns-3's, IANA's, to 65535 */
    uint16_t portLast{65535};                     /* PORT_FIRST + short_ports - 1 */

    static Peer PeerOf(const Address& a)
    {
        InetSocketAddress i = InetSocketAddress::ConvertFrom(a);
        return {i.GetIpv4().Get(), i.GetPort()};
    }

    void Listen(Ptr<Node> server, uint16_t port)
    {
        listener = Socket::CreateSocket(server, TcpSocketFactory::GetTypeId());
        listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
        listener->Listen();
        listener->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                    MakeCallback(&ShortFlows::Accepted, this));
    }

    /* Bind s to the next port of self after the last one given, passing over
     * the ports in use on the client (its Bind fails) and those whose last
     * connection's server side is open. Falls back to ns-3's allocator (any
     * free port of 49152-65535) if every port is taken. */
    void BindPort(Ptr<Socket> s, Ipv4Address self)
    {
        uint16_t& last = lastPort.try_emplace(self.Get(), PORT_FIRST).first->second;
        for (uint32_t n = 0; n <= uint32_t(portLast - PORT_FIRST); n++)
        {
            last = last >= portLast ? PORT_FIRST : last + 1;
            auto it = byPeer.find({self.Get(), last});
            if (it != byPeer.end() && flows[it->second].srvOpen)
            {
                portsPassed++;
                continue;
            }
            if (s->Bind(InetSocketAddress(self, last)) == 0)
                return;
        }
        s->Bind(InetSocketAddress(self, 0));
    }

    /* Flow i from client (a sender host, its address self) to the server. */
    void Start(size_t i, Ptr<Node> client, Ipv4Address self, Address server)
    {
        Ptr<Socket> s = Socket::CreateSocket(client, TcpSocketFactory::GetTypeId());
        BindPort(s, self);
        Address local;
        s->GetSockName(local);
        byPeer[PeerOf(local)] = i;
        s->SetSendCallback(MakeCallback(&ShortFlows::ClientSend, this));
        s->SetRecvCallback(MakeCallback(&ShortFlows::ClientRecv, this));
        s->SetConnectCallback(MakeCallback(&ShortFlows::Connected, this),
                              MakeNullCallback<void, Ptr<Socket>>());
        s->Connect(server);
    }

    One* OfSocket(Ptr<Socket> s, bool server)
    {
        Address a;
        if (server ? s->GetPeerName(a) : s->GetSockName(a))
            return nullptr;
        auto it = byPeer.find(PeerOf(a));
        return it == byPeer.end() ? nullptr : &flows[it->second];
    }

    /* Send from *sent up to total bytes as the socket's buffer takes them:
     * true once all are sent. */
    static bool Push(Ptr<Socket> s, uint64_t* sent, uint64_t total)
    {
        while (*sent < total && s->GetTxAvailable() > 0)
        {
            uint32_t n = static_cast<uint32_t>(
                std::min<uint64_t>({total - *sent, s->GetTxAvailable(), 65536}));
            int r = s->Send(Create<Packet>(n));
            if (r <= 0)
                break;
            *sent += static_cast<uint64_t>(r);
        }
        return *sent >= total;
    }

    void Connected(Ptr<Socket> s) { ClientSend(s, s->GetTxAvailable()); }

    void ClientSend(Ptr<Socket> s, uint32_t)
    {
        if (One* f = OfSocket(s, false))
            Push(s, &f->sent, HEADER + (f->dir == 'U' ? f->bytes : 0));
    }

    void ClientRecv(Ptr<Socket> s)
    {
        One* f = OfSocket(s, false);
        while (Ptr<Packet> p = s->Recv())
            if (f)
                f->got += p->GetSize();
        if (f && f->fct < 0 && f->got >= (f->dir == 'U' ? 1 : f->bytes))
        {
            f->fct = Simulator::Now().GetSeconds() - f->t;
            s->Close();
        }
    }

    /* The server's socket's state trace; flows is complete before the run
     * starts, so f stays valid. */
    static void ServerState(One* f, TcpSocket::TcpStates_t, TcpSocket::TcpStates_t now)
    {
        f->srvOpen = now != TcpSocket::CLOSED;
    }

    void Accepted(Ptr<Socket> s, const Address&)
    {
        if (One* f = OfSocket(s, true))
        {
            f->srvOpen = true;
            s->TraceConnectWithoutContext("State", MakeBoundCallback(&ShortFlows::ServerState, f));
        }
        s->SetRecvCallback(MakeCallback(&ShortFlows::ServerRecv, this));
        s->SetSendCallback(MakeCallback(&ShortFlows::ServerSend, this));
    }

    void ServerRecv(Ptr<Socket> s)
    {
        One* f = OfSocket(s, true);
        while (Ptr<Packet> p = s->Recv())
            if (f)
                f->srvGot += p->GetSize();
        if (!f || f->answered || f->srvGot < HEADER + (f->dir == 'U' ? f->bytes : 0))
            return;
        f->answered = true;
        if (f->dir == 'U')
            s->Send(Create<Packet>(1));
        ServerSend(s, s->GetTxAvailable());
    }

    void ServerSend(Ptr<Socket> s, uint32_t)
    {
        One* f = OfSocket(s, true);
        if (f && f->answered && Push(s, &f->srvSent, f->dir == 'U' ? 0 : f->bytes))
            s->Close();
    }
};

struct FlowState
{
    FlowSpec spec;
    Ptr<PacketSink> sink;
    Ptr<Application> app;
    uint64_t lastRx{0};
    std::vector<std::array<double, 3>> series;     // [t0, t1, bits/s], run time
    std::vector<std::array<double, 3>> tcpSeries;  // [t - start, cwnd bytes, srtt ms]
    uint32_t cwnd{0};
    double srttMs{0};
};

void
CwndTrace(FlowState* f, uint32_t, uint32_t v)
{
    f->cwnd = v;
}

void
RttTrace(FlowState* f, Time, Time v)
{
    f->srttMs = v.GetSeconds() * 1e3;
}

double
Percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return NAN;
    std::sort(v.begin(), v.end());
    double k = (v.size() - 1) * p / 100.0;
    size_t lo = static_cast<size_t>(std::floor(k)), hi = static_cast<size_t>(std::ceil(k));
    return v[lo] + (v[hi] - v[lo]) * (k - lo);
}

std::string
Num(double x)
{
    if (std::isnan(x) || std::isinf(x))
        return "null";
    char b[40];
    std::snprintf(b, sizeof(b), "%.6g", x);
    return b;
}

class Run
{
  public:
    explicit Run(const Spec& s)
        : m_s(s)
    {
    }

    void Build();
    void Go();
    std::string Json(double wallS) const;

  private:
    void JsonFlows(std::ostream& o) const;
    void JsonShorts(std::ostream& o) const;
    void JsonAfcd(std::ostream& o) const;
    void JsonQdisc(std::ostream& o) const;
    void SetDefaults() const;
    void BuildTopology();
    void InstallBottleneck();
    void InstallFlows();
    void InstallShorts();
    void Sample();
    void SampleBacklog();
    uint64_t BottleneckBytes() const;

    const Spec& m_s;
    NodeContainer m_senders, m_leaves;
    Ptr<Node> m_router;
    NodeContainer m_receivers;            // receiver 0 serves the short flows
    std::vector<Ipv4Address> m_recvAddrs; // of m_receivers, in order
    std::vector<Ipv4Address> m_senderAddr;
    Ptr<QueueDisc> m_qdisc;
    Ptr<AfcdEdtQueueDisc> m_afcd;
    Ptr<NetDevice> m_bottleDev;
    std::vector<FlowState> m_flows;
    ShortFlows m_short;
    std::vector<double> m_backlogMs, m_backlogBytes;
    std::vector<std::string> m_afcdSeries;
};

uint64_t
Run::BottleneckBytes() const
{
    uint64_t b = m_afcd ? m_afcd->HeldBytes() : m_qdisc->GetNBytes();
    Ptr<PointToPointNetDevice> d = DynamicCast<PointToPointNetDevice>(m_bottleDev);
    return b + d->GetQueue()->GetNBytes();
}

/* ns-3's TCP as the run sets it, as Linux's hosts of the VM testbed run
 * it (TcpOf()); written to the result as "tcp" (JsonTcp()). */
struct TcpSettings
{
    uint32_t segmentBytes; /* the IP MTU less IPv4, TCP and timestamps: 1448 at 1500 */
    uint32_t delAckCount;  /* segments a delayed ACK covers */
    double delAckMs;       /* the delayed ACK's timeout, ms */
    uint32_t initialCwnd;  /* segments */
    uint64_t bufBytes;     /* each socket's send and receive buffer, bytes */
    double rtoMinMs;       /* ms */
    bool sack;
    bool ecn;
    double mslS;           /* maximum segment lifetime (TIME_WAIT is 2 MSL), s */
    double synTimeoutMs;   /* the first SYN's retransmission timeout, doubling at each, ms */
    uint32_t synRetries;   /* SYN retransmissions before the connection fails */
    uint32_t dataRetries;  /* retransmissions of one segment before the connection fails */
};

TcpSettings
TcpOf(const Spec& s)
{
    uint64_t bdp = static_cast<uint64_t>(s.rateMbit * 1e6 / 8 * s.rttMs / 1e3);
    TcpSettings t{};
    t.segmentBytes = s.mtu - 52;
    t.delAckCount = 2;
    /* Linux's TCP_DELACK_MIN, 40 ms; ns-3's 200 ms held a flow whose window
     * fell to one segment at a segment per 200 ms for the rest of the run.
     * At most a quarter of the minimum RTO: Linux quick-acks the segment a
     * timeout resends (tcp_enter_quickack_mode() on a duplicate) and undoes
     * a spurious timeout; ns-3 3.44 does neither, so a delayed ACK longer
     * than the RTO (chapter 4's stretched min_rto, 10 ms at 1 Gb/s) clocks
     * a small window by its timeouts: one segment per RTO, for good. */
    t.delAckMs = s.delAckMs >= 0 ? s.delAckMs : std::min(40.0, s.rtoMinMs / 4);
    t.initialCwnd = 10;
    /* the socket buffers as the VM's hosts have them (testbed/topo.py:
     * tcp_rmem/tcp_wmem max 32 MB, of which Linux keeps about half for data,
     * the rest for skb overhead): 4 BDP, at least 256 KB, at most 16 MB of
     * data. The cap also bounds ns-3's send buffer, whose retransmission
     * path walks it as a list (TcpTxBuffer): uncapped, at 1 Gb/s and
     * 120 ms, that walk took 98 % of the run. */
    t.bufBytes = s.sndbuf ? s.sndbuf : std::clamp<uint64_t>(4 * bdp, 1 << 18, uint64_t(16) << 20);
    t.rtoMinMs = s.rtoMinMs;
    t.sack = s.sack;
    t.ecn = s.ecn;
    /* TIME_WAIT of 1 s (2 MSL; Linux's is 60 s, ns-3's 240 s): ns-3 finds a
     * packet's socket by walking a list of every endpoint the node has
     * (Ipv4EndPointDemux), TIME_WAIT's included, and allocates ephemeral
     * ports by walking it too. Chapter 4's short flows at 1 Gb/s, 1,235 a
     * second, stalled there: 80 % of a run's time in that walk, a 30-s run
     * not done in 15 min, and the sender's 16,384 ports run out in 13 s. A
     * closed flow's port comes back after 13 s of arrivals at that rate,
     * long after any of its segments could. */
    t.mslS = 0.5;
    /* Linux's: TCP_TIMEOUT_INIT, 1 s (RFC 6298 sec. 2.1; ns-3's 3 s is RFC
     * 1122's), tcp_syn_retries 6 and tcp_retries2 15. With ns-3's 6 data
     * retries a flow whose segment was lost 7 times in a row gave up (at
     * chapter 4's 10-ms minimum RTO, 1.3 s after the first loss) where the
     * VM's senders keep trying for minutes. */
    t.synTimeoutMs = 1000;
    t.synRetries = 6;
    t.dataRetries = 15;
    return t;
}

/* ns-3's defaults before anything is made: the TCP settings (TcpOf()), the
 * MTU, the strong end-system model, the spec's "default" lines
 * (std::runtime_error naming one ns-3 does not take) and the random
 * streams' seed. The strong model (RFC 1122 sec. 3.3.4.2) takes a packet
 * in only on the interface that has its destination address; ns-3's weak
 * model, its default, checks every interface of the node for every
 * packet, which costs a router with an interface per sender host O(hosts)
 * a packet (10,000 CUBIC flows from 1,000 hosts at 10 Gb/s: 362 s of
 * wall for 3 s simulated, 209 with the strong model, every flow's result
 * the same to the byte, 2026-12-07). Every host here has one interface
 * and no packet is addressed to a router, so no packet's fate changes. */
void
Run::SetDefaults() const
{
    const Spec& s = m_s;
    const TcpSettings t = TcpOf(s);
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(t.segmentBytes));
    Config::SetDefault("ns3::PointToPointNetDevice::Mtu", UintegerValue(s.mtu));
    Config::SetDefault("ns3::Ipv4::StrongEndSystemModel", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(t.delAckCount));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MicroSeconds(
                           static_cast<int64_t>(t.delAckMs * 1e3))));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(t.initialCwnd));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(t.bufBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(t.bufBytes));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MicroSeconds(
                           static_cast<int64_t>(t.rtoMinMs * 1e3))));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(t.sack));
    Config::SetDefault("ns3::TcpSocketBase::MaxSegLifetime", DoubleValue(t.mslS));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue(t.ecn ? "On" : "Off"));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(MicroSeconds(
                           static_cast<int64_t>(t.synTimeoutMs * 1e3))));
    Config::SetDefault("ns3::TcpSocket::ConnCount", UintegerValue(t.synRetries));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(t.dataRetries));
    for (const auto& d : s.defaults)
        if (!Config::SetDefaultFailSafe(d.first, StringValue(d.second)))
            throw std::runtime_error("default " + d.first + " " + d.second +
                                     ": no such attribute, or a value it refuses");
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(s.seed);
}

/* The nodes, links and routes of the spec's topology. */
void
Run::BuildTopology()
{
    const Spec& s = m_s;
    double access = s.accessMbit > 0 ? s.accessMbit : 10 * s.rateMbit;

    m_senders.Create(s.senders);
    int nleaves = s.topology == "tree" ? (s.senders + 2) / 3 : 0;
    m_leaves.Create(nleaves);
    m_router = CreateObject<Node>();
    m_receivers.Create(s.receivers);
    /* with M receivers, the far end of the bottleneck is a switch */
    Ptr<Node> far = s.receivers > 1 ? CreateObject<Node>() : m_receivers.Get(0);
    InternetStackHelper stack;
    stack.Install(m_senders);
    stack.Install(m_leaves);
    stack.Install(m_router);
    stack.Install(m_receivers);
    if (s.receivers > 1)
        stack.Install(far);

    PointToPointHelper acc, bot;
    acc.SetDeviceAttribute("DataRate", DataRateValue(DataRate(access * 1e6)));
    acc.SetChannelAttribute("Delay", TimeValue(MicroSeconds(1)));
    bot.SetDeviceAttribute("DataRate", DataRateValue(DataRate(s.rateMbit * 1e6)));
    bot.SetQueue("ns3::DropTailQueue", "MaxSize", QueueSizeValue(QueueSize("1p")));
    double hopsUs = (s.topology == "tree" ? 2 : 1) * 1.0 + (s.receivers > 1 ? 1.0 : 0.0);
    bot.SetChannelAttribute("Delay",
                            TimeValue(MicroSeconds(std::max(1.0, s.rttMs * 500 - hopsUs))));
    Ipv4AddressHelper ip;
    int subnet = 0;
    auto link = [&](PointToPointHelper& h, Ptr<Node> a, Ptr<Node> b) {
        NetDeviceContainer d = h.Install(a, b);
        std::ostringstream base;
        base << "10." << (subnet / 250) << "." << (subnet % 250) << ".0";
        subnet++;
        ip.SetBase(base.str().c_str(), "255.255.255.0");
        return std::make_pair(d, ip.Assign(d));
    };
    for (int i = 0; i < s.senders; i++)
    {
        Ptr<Node> up = nleaves ? m_leaves.Get(i / 3) : m_router;
        auto l = link(acc, m_senders.Get(i), up);
        m_senderAddr.push_back(l.second.GetAddress(0));
    }
    for (int j = 0; j < nleaves; j++)
        link(acc, m_leaves.Get(j), m_router);
    auto bl = link(bot, m_router, far);
    m_bottleDev = bl.first.Get(0);
    if (s.receivers == 1)
        m_recvAddrs.push_back(bl.second.GetAddress(1));
    for (int j = 0; s.receivers > 1 && j < s.receivers; j++)
        m_recvAddrs.push_back(link(acc, far, m_receivers.Get(j)).second.GetAddress(1));
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
}

/* The queue disc at the bottleneck's egress: afcd_egress over its EDT
 * queue disc, or the named ns-3 queue disc with its attributes. */
void
Run::InstallBottleneck()
{
    const Spec& s = m_s;
    TrafficControlHelper tch;
    tch.Uninstall(m_bottleDev);
    if (s.bottleneck == "bpf")
    {
        tch.SetRootQueueDisc("ns3::AfcdEdtQueueDisc");
        m_qdisc = tch.Install(m_bottleDev).Get(0);
        m_afcd = DynamicCast<AfcdEdtQueueDisc>(m_qdisc);
        m_afcd->Configure(s.params, s.seed);
    }
    else
    {
        tch.SetRootQueueDisc(s.qdiscType);
        m_qdisc = tch.Install(m_bottleDev).Get(0);
        for (const auto& a : s.attrs)
            m_qdisc->SetAttribute(a.first, StringValue(a.second));
    }
}

/* The long flows: a sink on a receiver and a bulk (TCP) or constant-rate
 * (UDP) sender, each from its start to the run's end. One receiver: flow i
 * at port kFlowPort + i. M receivers: TCP flow i on receiver i % M at
 * kFlowPort + i / M, the UDP flows on receiver 0 at kUdpPort + their
 * count (SetChurn keys on the UDP port alone). */
void
Run::InstallFlows()
{
    const Spec& s = m_s;
    m_flows.resize(s.flows.size());
    uint16_t udp = 0;
    for (size_t i = 0; i < s.flows.size(); i++)
    {
        FlowState& f = m_flows[i];
        f.spec = s.flows[i];
        Ptr<Node> src = m_senders.Get(f.spec.sender);
        bool tcp = f.spec.proto == "tcp";
        size_t rx = s.receivers > 1 && tcp ? i % s.receivers : 0;
        uint16_t port = s.receivers == 1 ? kFlowPort + i
                        : tcp            ? kFlowPort + i / s.receivers
                                         : kUdpPort + udp++;
        Ipv4Address dst = m_recvAddrs[rx];
        std::string fac = tcp ? "ns3::TcpSocketFactory" : "ns3::UdpSocketFactory";
        PacketSinkHelper sink(fac, InetSocketAddress(Ipv4Address::GetAny(), port));
        f.sink = DynamicCast<PacketSink>(sink.Install(m_receivers.Get(rx)).Get(0));
        if (tcp)
        {
            src->GetObject<TcpL4Protocol>()->SetAttribute(
                "SocketType", TypeIdValue(TypeId::LookupByName(CcTypeId(f.spec.cc))));
            BulkSendHelper bs(fac, InetSocketAddress(dst, port));
            f.app = bs.Install(src).Get(0);
        }
        else
        {
            /* churn: 64-byte frames (22 bytes of payload) at RATE_MBIT of
             * frames, each seen by the program as another flow's */
            bool churn = f.spec.proto == "churn";
            OnOffHelper oo(fac, InetSocketAddress(dst, port));
            if (churn)
                oo.SetConstantRate(DataRate(f.spec.rateMbit * 1e6 * kChurnPayload /
                                            kChurnFrame),
                                   kChurnPayload);
            else
                oo.SetConstantRate(DataRate(f.spec.rateMbit * 1e6), m_s.mtu - 28);
            f.app = oo.Install(src).Get(0);
            if (churn && !m_afcd)
                throw std::runtime_error("a churn flow needs the bpf bottleneck");
            if (churn)
                m_afcd->SetChurn(port, s.churnFlows);
        }
        f.app->SetStartTime(Seconds(f.spec.startS));
        f.app->SetStopTime(Seconds(s.durationS));
        if (tcp && s.tcpSeries)
        {
            FlowState* fp = &f;
            Simulator::Schedule(Seconds(f.spec.startS) + MicroSeconds(1), [fp]() {
                Ptr<Socket> so = DynamicCast<BulkSendApplication>(fp->app)->GetSocket();
                if (so)
                {
                    so->TraceConnectWithoutContext("CongestionWindow",
                                                   MakeBoundCallback(&CwndTrace, fp));
                    so->TraceConnectWithoutContext("RTT", MakeBoundCallback(&RttTrace, fp));
                }
            });
        }
    }
}

/* The short flows' server on the receiver, and each flow's client at its
 * time. */
void
Run::InstallShorts()
{
    const Spec& s = m_s;
    const uint16_t port = 4000;
    if (s.shorts.empty())
        return;
    m_short.Listen(m_receivers.Get(0), port);
    m_short.portLast = static_cast<uint16_t>(ShortFlows::PORT_FIRST + s.shortPorts - 1);
    for (const auto& sh : s.shorts)
    {
        ShortFlows::One f{};
        f.t = sh.t;
        f.bytes = sh.bytes;
        f.dir = sh.dir;
        m_short.flows.push_back(f);
        Simulator::Schedule(Seconds(sh.t), &ShortFlows::Start, &m_short,
                            m_short.flows.size() - 1, m_senders.Get(sh.sender),
                            m_senderAddr[sh.sender],
                            Address(InetSocketAddress(m_recvAddrs[0], port)));
    }
}

void
Run::Build()
{
    SetDefaults();
    BuildTopology();
    InstallBottleneck();
    InstallFlows();
    InstallShorts();
    Simulator::Schedule(Seconds(0.5), &Run::Sample, this);
    Simulator::Schedule(MilliSeconds(10), &Run::SampleBacklog, this);
}

void
Run::Sample()
{
    double t = Simulator::Now().GetSeconds();
    for (auto& f : m_flows)
    {
        uint64_t rx = f.sink->GetTotalRx();
        if (t > f.spec.startS)
            f.series.push_back({std::max(t - 0.5, f.spec.startS), t,
                                (rx - f.lastRx) * 8.0 / (t - std::max(t - 0.5, f.spec.startS))});
        f.lastRx = rx;
        if (m_s.tcpSeries && f.spec.proto == "tcp" && t > f.spec.startS && f.cwnd)
            f.tcpSeries.push_back({t - f.spec.startS, double(f.cwnd), f.srttMs});
    }
    if (m_afcd)
    {
        struct afcd_drive_stats st;
        if (!afcd_drive_read(m_afcd->Drive(), &st))
        {
            std::ostringstream o;
            o << "{\"t\":" << Num(t) << ",\"n_long\":" << st.n_long << ",\"m_fair\":"
              << st.m_fair << ",\"waterline\":" << st.waterline << ",\"n_flows\":"
              << st.n_active << ",\"fair_rate_bps\":" << st.fair_rate_bps << "}";
            m_afcdSeries.push_back(o.str());
        }
    }
    if (t + 0.25 < m_s.durationS)
        Simulator::Schedule(Seconds(0.5), &Run::Sample, this);
}

void
Run::SampleBacklog()
{
    if (Simulator::Now().GetSeconds() >= m_s.warmupS)
    {
        double b = static_cast<double>(BottleneckBytes());
        m_backlogBytes.push_back(b);
        m_backlogMs.push_back(b * 8 / (m_s.rateMbit * 1e6) * 1e3);
    }
    Simulator::Schedule(MilliSeconds(10), &Run::SampleBacklog, this);
}

void
Run::Go()
{
    /* a nanosecond past the end, so that the last interval's sample, due
     * at the end and scheduled after this, is taken */
    Simulator::Stop(Seconds(m_s.durationS) + NanoSeconds(1));
    Simulator::Run();
}

/* A distribution's summary as a JSON object: mean, p50, p95, p99, max, n. */
std::string
Dist(const std::vector<double>& v)
{
    double sum = 0;
    for (double x : v)
        sum += x;
    std::ostringstream d;
    d << "{\"mean\":" << Num(v.empty() ? NAN : sum / v.size()) << ",\"p50\":"
      << Num(Percentile(v, 50)) << ",\"p95\":" << Num(Percentile(v, 95)) << ",\"p99\":"
      << Num(Percentile(v, 99)) << ",\"max\":" << Num(Percentile(v, 100)) << ",\"n\":"
      << v.size() << "}";
    return d.str();
}

/* "flows": each long flow's spec, bytes received, rate series and (TCP,
 * with tcp_series) cwnd and srtt series, as the VM runner's flows. */
void
Run::JsonFlows(std::ostream& o) const
{
    o << ",\"flows\":[";
    for (size_t i = 0; i < m_flows.size(); i++)
    {
        const FlowState& f = m_flows[i];
        o << (i ? "," : "") << "{\"name\":\"" << f.spec.name << "\",\"group\":\""
          << f.spec.group << "\",\"cc\":" << (f.spec.proto == "tcp" ? "\"" + f.spec.cc + "\""
                                                                     : std::string("null"))
          << ",\"proto\":\"" << f.spec.proto << "\",\"sender\":" << f.spec.sender
          << ",\"start_s\":" << Num(f.spec.startS) << ",\"bytes\":" << f.sink->GetTotalRx()
          << ",\"configured_mbps\":"
          << (f.spec.proto != "tcp" ? Num(f.spec.rateMbit) : std::string("null"))
          << ",\"series\":[";
        for (size_t k = 0; k < f.series.size(); k++)
            o << (k ? "," : "") << "[" << Num(f.series[k][0]) << "," << Num(f.series[k][1])
              << "," << Num(f.series[k][2]) << "]";
        o << "],\"client\":{\"tcp_series\":[";
        for (size_t k = 0; k < f.tcpSeries.size(); k++)
            o << (k ? "," : "") << "[" << Num(f.tcpSeries[k][0]) << ","
              << Num(f.tcpSeries[k][1]) << "," << Num(f.tcpSeries[k][2]) << "]";
        o << "]}}";
    }
    o << "]";
}

/* "short_flows": [start s, bytes, direction, FCT s or null] each. */
void
Run::JsonShorts(std::ostream& o) const
{
    o << ",\"short_flows\":[";
    for (size_t i = 0; i < m_short.flows.size(); i++)
    {
        const auto& f = m_short.flows[i];
        o << (i ? "," : "") << "[" << Num(f.t) << "," << f.bytes << ",\"" << f.dir << "\","
          << (f.fct < 0 ? std::string("null") : Num(f.fct)) << "]";
    }
    o << "]";
}

/* The datapath's counters and estimates as `afcd stats -j` names them, its
 * BPF cost, map memory and estimate series. */
void
Run::JsonAfcd(std::ostream& o) const
{
    struct afcd_drive_stats st;
    afcd_drive_read(m_afcd->Drive(), &st);
    char* queue = afcd_drive_queue_json(m_afcd->Drive());
    o << ",\"afcd_stats\":{\"queue\":" << (queue ? queue : "null");
    free(queue);
    o << ",\"estimates\":{\"n_flows\":"
      << st.n_active << ",\"n_long\":" << st.n_long << ",\"m_fair\":" << st.m_fair
      << ",\"waterline\":" << st.waterline << ",\"global_target_ns\":"
      << st.global_target_ns << ",\"fair_rate_bps\":" << st.fair_rate_bps
      << ",\"arrival_bps\":" << st.arrival_bps << ",\"sb_size\":" << st.sb_size
      << ",\"sb_grows\":" << st.sb_grows << "}},\"bpf_cost\":{\"run_cnt\":" << st.runs
      << ",\"run_time_ns\":" << st.run_ns << ",\"ns_per_pkt\":"
      << Num(st.runs ? double(st.run_ns) / st.runs : NAN)
      << "},\"map_memlock_bytes\":" << st.memlock_bytes << ",\"afcd_series\":[";
    for (size_t i = 0; i < m_afcdSeries.size(); i++)
        o << (i ? "," : "") << m_afcdSeries[i];
    o << "]";
}

/* An ns-3 queue disc's counters under the kernel's names (tc -s -j). */
void
Run::JsonQdisc(std::ostream& o) const
{
    const QueueDisc::Stats& st = m_qdisc->GetStats();
    auto drops = [&](const char* r) {
        auto it = st.nDroppedPacketsBeforeEnqueue.find(r);
        uint64_t n = it == st.nDroppedPacketsBeforeEnqueue.end() ? 0 : it->second;
        auto jt = st.nDroppedPacketsAfterDequeue.find(r);
        return n + (jt == st.nDroppedPacketsAfterDequeue.end() ? 0 : jt->second);
    };
    auto marks = [&](const char* r) {
        auto it = st.nMarkedPackets.find(r);
        return it == st.nMarkedPackets.end() ? uint64_t(0) : it->second;
    };
    std::string kind = m_s.qdiscType.substr(m_s.qdiscType.find("::") + 2);
    o << ",\"qdisc_stats\":[{\"kind\":\"" << kind << "\",\"packets\":"
      << st.nTotalSentPackets << ",\"drops\":" << st.nTotalDroppedPackets
      << ",\"ecn_mark\":" << st.nTotalMarkedPackets << ",\"drop_overlimit\":"
      << drops("Overlimit drop") + drops("Forced drop") + drops("Queue disc limit exceeded")
      << ",\"early\":" << drops("Unforced drop") << ",\"marked\":"
      << marks("Unforced mark") + marks("Forced mark") << "}]";
}

/* The run's result, one JSON object in the VM runner's shape. */
std::string
Run::Json(double wallS) const
{
    std::ostringstream o;
    double bsum = 0;
    for (double x : m_backlogBytes)
        bsum += x;
    o << "{\"engine\":\"ns3\",\"ns3_version\":\"3.44\",\"seed\":" << m_s.seed
      << ",\"sim_s\":" << Num(m_s.durationS) << ",\"wall_s\":" << Num(wallS)
      << ",\"backlog_delay_ms\":" << Dist(m_backlogMs) << ",\"backlog_bytes_mean\":"
      << Num(m_backlogBytes.empty() ? NAN : bsum / m_backlogBytes.size());
    const TcpSettings t = TcpOf(m_s);
    o << ",\"tcp\":{\"segment_bytes\":" << t.segmentBytes << ",\"delack_count\":"
      << t.delAckCount << ",\"delack_ms\":" << Num(t.delAckMs) << ",\"initial_cwnd\":"
      << t.initialCwnd << ",\"buf_bytes\":" << t.bufBytes << ",\"rto_min_ms\":"
      << Num(t.rtoMinMs) << ",\"sack\":" << (t.sack ? 1 : 0) << ",\"ecn\":" << (t.ecn ? 1 : 0)
      << ",\"msl_s\":" << Num(t.mslS) << ",\"syn_timeout_ms\":" << Num(t.synTimeoutMs)
      << ",\"syn_retries\":" << t.synRetries << ",\"data_retries\":" << t.dataRetries << "}"
      << ",\"short_ports_passed\":" << m_short.portsPassed;
    JsonFlows(o);
    JsonShorts(o);
    if (m_afcd)
        JsonAfcd(o);
    else
        JsonQdisc(o);
    o << "}";
    return o.str();
}

} // namespace

int
main(int argc, char** argv)
{
    try
    {
        Spec s = ReadSpec(std::cin);
        auto t0 = std::chrono::steady_clock::now();
        Run run(s);
        run.Build();
        run.Go();
        double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::cout << run.Json(wall) << std::endl;
        Simulator::Destroy();
    }
    catch (const std::exception& e)
    {
        std::cerr << "afcd-sim: " << e.what() << std::endl;
        return 1;
    }
    return 0;
}
