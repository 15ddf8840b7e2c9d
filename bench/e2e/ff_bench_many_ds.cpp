// SPDX-License-Identifier: LGPL-3.0-or-later
//
// ff-bench-many-ds: an MDS export with 64 data servers beside the same MDS with 3, in one
// run, FLEXFILES over VFS with Mirrors = 1 (issue #16, item 5).
//
// The 64 data servers. 64 ganesha.nfsd processes do not fit on 2 cores, so a few Ganesha
// NFSv3 processes (8 by default, the harness's data servers at 127.S.0.10..) each serve
// several VFS exports, and every export is one data server of the MDS: its own Data_Server
// block (Id, Address, NFS_Port 2049, MNT_Port 20048, Export_Path = that export's Path).
// The MDS refuses two Data_Server blocks with the same Address:NFS_Port (one address is
// one device to a client), and a Ganesha process listens on one address and one port, so
// each export gets its own loopback address, 127.S.0.(100 + i), where a TCP relay in this
// process accepts the MDS's MOUNT and NFS connections and forwards them, byte for byte, to
// the Ganesha process behind that export. To the MDS these are 64 servers at 64 addresses:
// 64 connections, 64 event threads, 64 probes. The 3-data-server export is built the same
// way (3 exports of their own, on the first three processes, at 127.S.0.200..202) so the
// only difference between the two columns is the number of data servers. The relay's CPU
// is this process's, not the MDS's; it only adds a loopback hop to the MDS's own requests
// to the data servers (creates, probes).
//
// Two MDS configurations, the same ganesha.nfsd and module: 127.S.0.1 with the 3, 127.S.0.2
// with the 64 (dbus names mds3.org.ganesha.nfsd, mds64.org.ganesha.nfsd). Every step
// alternates them, the order reversed every other round, so the machine's load (2 cores,
// shared) hits both alike:
//   start-up  --rounds starts of each, alone (the other stopped): time from spawning
//             ganesha.nfsd to the first answered GETATTR of the export (a prober thread, a
//             new session every 2 ms) and to every data server Up (ListDataServers over the
//             private dbus every 5 ms);
//   idle      both running, nobody asking: threads (/proc/<pid>/task; the fleet's event
//             threads are named ff-ds<Id>), RSS, address space, open descriptors, and over
//             the same --idle seconds each MDS's requests to its data servers (its own
//             per-data-server counters, NULL probes and other requests, ListDataServers)
//             and its CPU time (/proc/<pid>/stat);
//   placement --files empty files created through each MDS (OPEN with create, CLOSE) from 4
//             sessions in 10 alternating batches, then the data files in each data server's
//             export folder counted;
//   latency   --ops LAYOUTGETs (RW, whole file; the OPEN before and LAYOUTRETURN + CLOSE
//             after are not timed), then --ops GETDEVICEINFOs cycling over every device id
//             the layouts named, one pNFS session per MDS, one call at a time, in 10
//             alternating batches, each compound timed by this client.
// Writes <out>/many-ds.md.
#include "bench_support.hpp"
#include "client/compound.hpp"
#include "client/file_ops.hpp"
#include "client/flex_layout.hpp"
#include "client/session.hpp"
#include "ff_harness/harness.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <memory>
#include <netinet/in.h>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace flexfiles::harness;
namespace fc = flexfiles::client;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

using bench::fmt;
using bench::process_cpu_seconds;
using bench::progress;
using bench::self_cpu_seconds;

constexpr unsigned kManyDs = 64;
constexpr unsigned kFewDs = 3;
constexpr unsigned kFirstManyHost = 100; // 127.S.0.100 .. 163
constexpr unsigned kFirstFewHost = 200;  // 127.S.0.200 .. 202
constexpr unsigned kFewMdsHost = 1;      // 127.S.0.1
constexpr unsigned kManyMdsHost = 2;     // 127.S.0.2
constexpr unsigned kBatches = 10;        // creates and latency samples, alternating
constexpr unsigned kDirs = 16;
constexpr unsigned kCreateSessions = 4;

struct Args {
    unsigned processes = 8;
    unsigned files = 6400;
    unsigned ops = 1000;
    unsigned rounds = 7;
    unsigned idle_s = 20;
    std::string out_dir = ".";
};

Args parse_args(int argc, char** argv) {
    Args a;
    bench::for_each_option(
        argc, argv,
        "usage: ff-bench-many-ds [--processes P] [--files N] [--ops N] [--rounds R] "
        "[--idle S] [--out DIR]",
        [&](const std::string& k, const std::string& v) {
            const auto n = [&] { return static_cast<unsigned>(bench::number(k, v)); };
            if (k == "--out")
                a.out_dir = v;
            else if (k == "--processes")
                a.processes = std::clamp(n(), 1u, kManyDs);
            else if (k == "--files")
                a.files = std::max(n(), kManyDs);
            else if (k == "--ops")
                a.ops = std::max(n(), 10u);
            else if (k == "--rounds")
                a.rounds = std::max(n(), 1u);
            else if (k == "--idle")
                a.idle_s = std::max(n(), 2u);
            else
                return false;
            return true;
        });
    return a;
}

double seconds(Clock::duration d) {
    return std::chrono::duration<double>(d).count();
}

// ---- The relay: one loopback address:port per data server, onto the shared process. ----

// Forwards every TCP connection accepted on a (from address, port) to a (to address, port),
// on one epoll thread. Each direction holds at most one read's worth of bytes: a side is
// read only when what was read from it before has been written to the other side. Either
// side closing closes both (an RPC connection has nothing to say after its peer left).
class TcpRelay {
public:
    TcpRelay() : epoll_(epoll_create1(EPOLL_CLOEXEC)), wake_(eventfd(0, EFD_CLOEXEC)) {
        if (epoll_ < 0 || wake_ < 0)
            throw std::runtime_error(std::string("relay: epoll/eventfd: ") + strerror(errno));
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.ptr = nullptr; // the wake-up
        epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &ev);
    }
    ~TcpRelay() {
        if (thread_.joinable()) {
            const std::uint64_t one = 1;
            [[maybe_unused]] auto n = write(wake_, &one, sizeof(one));
            thread_.join();
        }
        for (auto& c : conns_)
            close_conn(*c);
        for (auto& l : listeners_)
            close(l->fd);
        close(wake_);
        close(epoll_);
    }
    TcpRelay(const TcpRelay&) = delete;
    TcpRelay& operator=(const TcpRelay&) = delete;

    // Listens at once; connections are served once start() has run.
    void add(const std::string& from, std::uint16_t from_port, const std::string& to,
             std::uint16_t to_port) {
        auto l = std::make_unique<Listener>();
        l->target = address(to, to_port);
        l->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        const int on = 1;
        setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
        const sockaddr_in at = address(from, from_port);
        if (l->fd < 0 || bind(l->fd, reinterpret_cast<const sockaddr*>(&at), sizeof(at)) != 0 ||
            ::listen(l->fd, 64) != 0)
            throw std::runtime_error("relay: cannot listen on " + from + ":" +
                                     std::to_string(from_port) + ": " + strerror(errno));
        watch(l->fd, EPOLLIN, l.get());
        listeners_.push_back(std::move(l));
    }

    void start() {
        thread_ = std::thread([this] { run(); });
    }

    std::uint64_t connections() const { return accepted_.load(); }

private:
    struct Tag {
        bool listener = false;
    };
    struct Listener : Tag {
        Listener() { listener = true; }
        int fd = -1;
        sockaddr_in target{};
    };
    struct Conn;
    struct Side : Tag {
        Conn* conn = nullptr;
        int index = 0;
    };
    struct Conn {
        std::array<int, 2> fd{-1, -1}; // 0: accepted (the MDS), 1: to the Ganesha process
        std::array<Side, 2> side;
        std::array<std::vector<char>, 2> pending; // read from fd[i], not yet written to the other
        std::array<std::size_t, 2> written{0, 0};
        bool closed = false;
    };

    static sockaddr_in address(const std::string& ip, std::uint16_t port) {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        if (inet_pton(AF_INET, ip.c_str(), &a.sin_addr) != 1)
            throw std::invalid_argument("relay: not an IPv4 address: " + ip);
        return a;
    }

    void watch(int fd, std::uint32_t events, Tag* tag, int op = EPOLL_CTL_ADD) {
        epoll_event ev{};
        ev.events = events;
        ev.data.ptr = tag;
        epoll_ctl(epoll_, op, fd, &ev);
    }

    void close_conn(Conn& c) {
        if (c.closed)
            return;
        c.closed = true;
        for (int fd : c.fd)
            if (fd >= 0) {
                epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
                close(fd);
            }
    }

    // What fd[i] waits for: input while nothing it sent is pending, output while the other
    // side's bytes wait for it.
    void rearm(Conn& c) {
        for (int i = 0; i < 2; ++i) {
            std::uint32_t ev = 0;
            if (c.pending[i].empty())
                ev |= EPOLLIN;
            if (!c.pending[1 - i].empty())
                ev |= EPOLLOUT;
            watch(c.fd[i], ev, &c.side[i], EPOLL_CTL_MOD);
        }
    }

    // Writes what fd[from] left pending to the other side; false if the connection broke.
    static bool flush(Conn& c, int from) {
        auto& buf = c.pending[from];
        while (c.written[from] < buf.size()) {
            const ssize_t n = send(c.fd[1 - from], buf.data() + c.written[from],
                                   buf.size() - c.written[from], MSG_NOSIGNAL);
            if (n < 0)
                return errno == EAGAIN || errno == EWOULDBLOCK;
            c.written[from] += static_cast<std::size_t>(n);
        }
        buf.clear();
        c.written[from] = 0;
        return true;
    }

    void accept_from(Listener& l) {
        for (;;) {
            const int in = accept4(l.fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (in < 0)
                return;
            // A loopback connect to a listening Ganesha completes at once.
            const int out = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (out < 0 ||
                connect(out, reinterpret_cast<const sockaddr*>(&l.target), sizeof(l.target)) != 0) {
                close(in);
                if (out >= 0)
                    close(out);
                continue;
            }
            fcntl(out, F_SETFL, fcntl(out, F_GETFL) | O_NONBLOCK);
            auto c = std::make_unique<Conn>();
            c->fd = {in, out};
            for (int i = 0; i < 2; ++i) {
                c->side[i].conn = c.get();
                c->side[i].index = i;
                watch(c->fd[i], EPOLLIN, &c->side[i]);
            }
            conns_.push_back(std::move(c));
            ++accepted_;
        }
    }

    void on_side(Side& s, std::uint32_t events) {
        Conn& c = *s.conn;
        if (c.closed)
            return;
        const int i = s.index;
        bool ok = true;
        if (events & EPOLLOUT)
            ok = flush(c, 1 - i);
        if (ok && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && c.pending[i].empty()) {
            char buf[65536];
            const ssize_t n = recv(c.fd[i], buf, sizeof(buf), 0);
            if (n > 0) {
                c.pending[i].assign(buf, buf + n);
                ok = flush(c, i);
            } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
                ok = false;
            }
        }
        if (ok)
            rearm(c);
        else
            close_conn(c);
    }

    void run() {
        std::array<epoll_event, 64> events;
        for (;;) {
            const int n = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), -1);
            for (int k = 0; k < n; ++k) {
                auto* tag = static_cast<Tag*>(events[k].data.ptr);
                if (tag == nullptr)
                    return;
                if (tag->listener)
                    accept_from(*static_cast<Listener*>(tag));
                else
                    on_side(*static_cast<Side*>(tag), events[k].events);
            }
            // Connections closed in this batch are freed only now: a later event of the
            // same batch may still name them.
            std::erase_if(conns_, [](const auto& c) { return c->closed; });
        }
    }

    int epoll_;
    int wake_;
    std::vector<std::unique_ptr<Listener>> listeners_;
    std::vector<std::unique_ptr<Conn>> conns_; // the relay thread's, once started
    std::atomic<std::uint64_t> accepted_{0};
    std::thread thread_;
};

// ---- The data servers: exports of a few Ganesha processes, each a Data_Server block. ----

struct Layout {
    std::vector<DataServerInfo> many; // 64, at 127.S.0.100..
    std::vector<DataServerInfo> few;  // 3, at 127.S.0.200..
    std::vector<unsigned> process;    // of many then few: the Ganesha process serving it
    std::vector<unsigned> exports_per_process;
};

// Data server v of a set goes to process v % P, as export <process folder>/<name>. The
// addresses and folders are filled in once the cluster exists (fill_addresses).
Layout plan_exports(unsigned processes) {
    Layout layout;
    layout.exports_per_process.assign(processes, 0);
    auto make = [&](std::vector<DataServerInfo>& set, unsigned count, const std::string& prefix,
                    std::uint16_t first_export_id) {
        for (unsigned v = 0; v < count; ++v) {
            DataServerInfo info;
            info.index = v;
            info.name = prefix + std::to_string(v + 1);
            info.export_id = static_cast<std::uint16_t>(first_export_id + v);
            set.push_back(info);
            layout.process.push_back(v % processes);
            ++layout.exports_per_process[v % processes];
        }
    };
    make(layout.many, kManyDs, "v", 1000);
    make(layout.few, kFewDs, "w", 2000);
    return layout;
}

// Calls f(info, process) for every planned data server.
template <class F> void each_planned(Layout& layout, F f) {
    std::size_t k = 0;
    for (auto* set : {&layout.many, &layout.few})
        for (auto& info : *set)
            f(info, layout.process[k++]);
}

void fill_addresses(Layout& layout, Cluster& cluster) {
    each_planned(layout, [&](DataServerInfo& info, unsigned p) {
        const bool many = info.name[0] == 'v';
        info.address =
            cluster.addresses().address((many ? kFirstManyHost : kFirstFewHost) + info.index);
        info.export_path = cluster.ds(p).dir() / info.name;
    });
}

// ---- What the MDS reports about its data servers (ListDataServers over dbus). ----

struct DsRow {
    std::uint64_t id = 0;
    std::string state;
    std::uint64_t probes = 0;
    std::uint64_t requests = 0;
};

// Parses dbus-send --print-reply's rendering of ListDataServers' aa{sv}: every dict starts
// with its "id" entry.
std::vector<DsRow> list_data_servers(DbusDaemon& dbus, const std::string& bus_name) {
    CommandResult r = dbus.send(bus_name, "/org/ganesha/nfsd/FlexFiles",
                                "org.ganesha.nfsd.flexfiles.ListDataServers", {"uint16:1"});
    if (!r.ok() || r.output.find("boolean true") == std::string::npos)
        throw std::runtime_error("ListDataServers: " + r.output);
    static const std::regex kEntry(
        "string \"([a-z_]+)\"\\s+variant\\s+(?:[a-z0-9]+) (?:\"([^\"]*)\"|([0-9-]+|true|false))");
    std::vector<DsRow> rows;
    for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), kEntry);
         it != std::sregex_iterator(); ++it) {
        const std::string key = (*it)[1].str();
        const std::string text = (*it)[2].matched ? (*it)[2].str() : (*it)[3].str();
        if (key == "id") {
            DsRow row;
            row.id = std::stoull(text);
            rows.push_back(row);
        } else if (rows.empty())
            continue;
        else if (key == "state")
            rows.back().state = text;
        else if (key == "probes")
            rows.back().probes = std::stoull(text);
        else if (key == "requests")
            rows.back().requests = std::stoull(text);
    }
    return rows;
}

// ---- The MDS process from /proc. ----

struct ProcSample {
    unsigned threads = 0;
    unsigned fleet_threads = 0; // named ff-ds<Id>
    unsigned fds = 0;
    long rss_kib = 0;
    long vm_kib = 0;  // address space: thread stacks are reserved here, not resident
    double cpu_s = 0; // user + system
};

std::string read_first_line(const fs::path& p) {
    std::ifstream in(p);
    std::string line;
    std::getline(in, line);
    return line;
}

ProcSample sample(pid_t pid) {
    const fs::path proc = "/proc/" + std::to_string(pid);
    ProcSample s;
    for (const auto& t : fs::directory_iterator(proc / "task")) {
        ++s.threads;
        if (read_first_line(t.path() / "comm").rfind("ff-ds", 0) == 0)
            ++s.fleet_threads;
    }
    for ([[maybe_unused]] const auto& fd : fs::directory_iterator(proc / "fd"))
        ++s.fds;
    std::ifstream status(proc / "status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmRSS:", 0) == 0)
            s.rss_kib = std::stol(line.substr(6));
        else if (line.rfind("VmSize:", 0) == 0)
            s.vm_kib = std::stol(line.substr(7));
    s.cpu_s = process_cpu_seconds(pid);
    return s;
}

// ---- One MDS configuration. ----

struct Latency {
    std::vector<double> us;
    double pct(double p) const {
        if (us.empty())
            return 0;
        std::vector<double> v = us;
        std::sort(v.begin(), v.end());
        return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
    }
    double mean() const {
        double sum = 0;
        for (double x : us)
            sum += x;
        return us.empty() ? 0 : sum / static_cast<double>(us.size());
    }
};

struct Result {
    unsigned data_servers = 0;
    std::vector<double> first_answer_s; // per start
    std::vector<double> all_up_s;
    ProcSample idle;
    double idle_window_s = 0;
    double probes_per_s = 0;
    double requests_per_s = 0;
    double idle_cpu_pct = 0;
    unsigned created = 0;
    double create_s = 0; // summed over its batches
    double creates_per_s() const { return create_s > 0 ? created / create_s : 0; }
    long rss_after_creates_kib = 0;
    std::vector<std::size_t> per_ds;
    std::size_t devices_seen = 0;
    Latency layoutget;
    Latency getdeviceinfo;
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

std::unique_ptr<fc::Session> open_session(const ServerOptions& mds, bool pnfs) {
    fc::SessionOptions so;
    so.host = mds.address;
    so.port = mds.nfs_port;
    so.minor_version = pnfs ? 2 : 1;
    if (!pnfs)
        so.exchange_flags = 0; // a plain client: no layouts
    so.connect_timeout = std::chrono::milliseconds(1000);
    return fc::Session::open(so);
}

std::string path_of(unsigned i) {
    return "/m/d" + std::to_string(i % kDirs) + "/f" + std::to_string(i);
}

// One MDS configuration: its own address (127.S.0.<host>), folder and dbus name, so the
// two can run side by side once their start-up has been timed alone.
class MdsRun {
public:
    MdsRun(Cluster& cluster, const std::vector<DataServerInfo>& ds, unsigned host)
        : cluster_(cluster), ds_(ds) {
        const std::string name = "mds" + std::to_string(ds.size());
        options_ = ServerOptions::metadata_server(name, cluster.addresses().address(host), 1);
        options_.dbus_address = cluster.dbus()->address();
        options_.dbus_name_prefix = name;
        options_.exports[0].pseudo = "/m";
        FlexfilesOptions ff;
        ff.attr_expiration_time = std::nullopt;
        ff.mirrors = 1;
        options_.exports[0].fsal = flexfiles_fsal_block(ds, ff);
        dir_ = cluster.dir() / name;
        result_.data_servers = static_cast<unsigned>(ds.size());
    }

    Result& result() { return result_; }
    GaneshaServer& mds() { return *mds_; }
    std::string bus_name() const { return options_.dbus_name_prefix + ".org.ganesha.nfsd"; }
    std::vector<DsRow> data_servers() const {
        return list_data_servers(*cluster_.dbus(), bus_name());
    }

    // Starts the MDS (the first time: creates it). With `timed`, a thread started just
    // before the spawn asks for a GETATTR of the export every 2 ms (a new session each
    // try) and then for ListDataServers every 5 ms until every data server is Up: the
    // harness's own readiness check polls every 50 ms, too coarse for this.
    void start(bool timed) {
        std::atomic<bool> stop{false};
        double first = -1, up = -1;
        std::string why;
        const auto t0 = Clock::now();
        std::thread prober;
        if (timed)
            prober = std::thread([&] {
                while (!stop && seconds(Clock::now() - t0) < 60) {
                    try {
                        auto s = open_session(options_, false);
                        fc::stat_path(*s, "/m");
                        first = seconds(Clock::now() - t0);
                        s->close();
                        break;
                    } catch (const std::exception& e) {
                        why = e.what();
                        std::this_thread::sleep_for(std::chrono::milliseconds(2));
                    }
                }
                while (first >= 0 && !stop && seconds(Clock::now() - t0) < 60) {
                    try {
                        const auto rows = data_servers();
                        const auto n = std::count_if(rows.begin(), rows.end(), [](const DsRow& r) {
                            return r.state == "up";
                        });
                        if (rows.size() == ds_.size() &&
                            static_cast<std::size_t>(n) == ds_.size()) {
                            up = seconds(Clock::now() - t0);
                            break;
                        }
                    } catch (const std::exception& e) {
                        why = e.what(); // the interface registers a moment after serving
                    }
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                }
            });
        try {
            if (!mds_)
                mds_ = std::make_unique<GaneshaServer>(options_, dir_);
            else
                mds_->start();
        } catch (...) {
            stop = true;
            if (prober.joinable())
                prober.join();
            throw;
        }
        if (!timed)
            return;
        prober.join();
        if (first < 0 || up < 0)
            throw std::runtime_error(
                options_.name + ": " +
                (first < 0 ? "no GETATTR answered" : "not every data server Up") +
                " 60 s after start: " + why);
        result_.first_answer_s.push_back(first);
        result_.all_up_s.push_back(up);
    }

    void stop() { mds_->stop(); }

    void create_dirs() {
        for (unsigned d = 0; d < kDirs; ++d)
            fs::create_directories(mds_->export_path() / ("d" + std::to_string(d)));
    }

    // Files [from, to) created empty from kCreateSessions sessions (OPEN with create, CLOSE).
    void create_files(unsigned from, unsigned to) {
        std::atomic<unsigned> failed{0};
        const auto t0 = Clock::now();
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < kCreateSessions; ++t)
            threads.emplace_back([&, t] {
                auto s = open_session(options_, false);
                for (unsigned i = from + t; i < to; i += kCreateSessions) {
                    try {
                        fc::OpenOptions o;
                        o.access = OPEN4_SHARE_ACCESS_BOTH;
                        o.create = true;
                        fc::OpenFile f = fc::open_path(*s, path_of(i), o);
                        fc::close_file(*s, f);
                    } catch (const std::exception& e) {
                        if (failed++ < 5)
                            progress("create " + path_of(i) + ": " + e.what());
                    }
                }
                s->close();
            });
        for (auto& th : threads)
            th.join();
        if (failed != 0)
            throw std::runtime_error(std::to_string(failed.load()) + " creates failed");
        result_.create_s += seconds(Clock::now() - t0);
        result_.created += to - from;
    }

    // The data files per data server, counted in each export's folder.
    void count_data_files() {
        result_.rss_after_creates_kib = sample(mds_->pid()).rss_kib;
        for (const auto& info : ds_) {
            std::size_t n = 0;
            for (const auto& e : fs::directory_iterator(info.export_path))
                n += e.path().filename().string().rfind("ff-", 0) == 0 ? 1 : 0;
            result_.per_ds.push_back(n);
        }
    }

    // `ops` LAYOUTGETs (PUTFH + LAYOUTGET RW, timed) of created files, each between an
    // OPEN and a LAYOUTRETURN + CLOSE (not timed); remembers the device ids they name.
    void layoutgets(unsigned files, unsigned ops) {
        if (!pnfs_)
            pnfs_ = open_session(options_, true);
        fc::Session& s = *pnfs_;
        for (unsigned k = 0; k < ops; ++k) {
            fc::OpenOptions o;
            o.access = OPEN4_SHARE_ACCESS_BOTH;
            // Strided over the files, so that every data server's files are asked for.
            fc::OpenFile f = fc::open_path(s, path_of(next_file_++ * 7 % files), o);
            fc::LayoutGetArgs lg;
            lg.iomode = LAYOUTIOMODE4_RW;
            lg.stateid = f.stateid;
            fc::Compound c;
            c.putfh(f.fh).layoutget(lg);
            const auto t0 = Clock::now();
            fc::CompoundResult r = s.send(c);
            result_.layoutget.us.push_back(seconds(Clock::now() - t0) * 1e6);
            r.check("layoutget " + f.path);
            const fc::FlexLayout layout = fc::decode_layoutget(r.layoutget(1));
            for (const auto& m : layout.mirrors)
                for (const auto& d : m.data_servers)
                    devices_.insert(d.deviceid);
            fc::LayoutReturnArgs lr;
            lr.stateid = layout.stateid;
            fc::Compound ret;
            ret.putfh(f.fh).layoutreturn(lr);
            s.send(ret).check("layoutreturn " + f.path);
            fc::close_file(s, f);
        }
        result_.devices_seen = devices_.size();
    }

    // `ops` GETDEVICEINFOs (timed), cycling over the device ids the layouts named.
    void getdeviceinfos(unsigned ops) {
        const std::vector<fc::DeviceId4> ids(devices_.begin(), devices_.end());
        if (ids.empty())
            throw std::logic_error("GETDEVICEINFO before any LAYOUTGET");
        for (unsigned k = 0; k < ops; ++k) {
            const fc::DeviceId4& id = ids[next_device_++ % ids.size()];
            fc::Compound c;
            c.getdeviceinfo(id);
            const auto t0 = Clock::now();
            fc::CompoundResult r = pnfs_->send(c);
            result_.getdeviceinfo.us.push_back(seconds(Clock::now() - t0) * 1e6);
            r.check("getdeviceinfo " + fc::format_deviceid(id));
            (void)fc::decode_getdeviceinfo(r.getdeviceinfo(0));
        }
    }

    void close_sessions() {
        if (pnfs_)
            pnfs_->close();
        pnfs_.reset();
    }

private:
    Cluster& cluster_;
    std::vector<DataServerInfo> ds_;
    ServerOptions options_;
    fs::path dir_;
    std::unique_ptr<GaneshaServer> mds_;
    std::unique_ptr<fc::Session> pnfs_;
    std::set<fc::DeviceId4> devices_;
    unsigned next_file_ = 0;
    unsigned next_device_ = 0;
    Result result_;
};

// Threads, memory and each MDS's own traffic to its data servers over the same --idle
// seconds, both running and nobody asking them anything.
void measure_idle(const std::array<MdsRun*, 2>& runs, unsigned idle_s) {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    std::array<std::vector<DsRow>, 2> rows0;
    std::array<ProcSample, 2> s0;
    for (int i = 0; i < 2; ++i) {
        rows0[i] = runs[i]->data_servers();
        s0[i] = sample(runs[i]->mds().pid());
    }
    const auto t0 = Clock::now();
    std::this_thread::sleep_for(std::chrono::seconds(idle_s));
    for (int i = 0; i < 2; ++i) {
        const auto rows1 = runs[i]->data_servers();
        const ProcSample s1 = sample(runs[i]->mds().pid());
        const double dt = seconds(Clock::now() - t0);
        std::uint64_t probes = 0, requests = 0;
        for (std::size_t k = 0; k < rows1.size() && k < rows0[i].size(); ++k) {
            probes += rows1[k].probes - rows0[i][k].probes;
            requests += rows1[k].requests - rows0[i][k].requests;
        }
        Result& r = runs[i]->result();
        r.idle = s1;
        r.idle_window_s = dt;
        r.probes_per_s = static_cast<double>(probes) / dt;
        r.requests_per_s = static_cast<double>(requests) / dt;
        r.idle_cpu_pct = 100.0 * (s1.cpu_s - s0[i].cpu_s) / dt;
    }
}

// ---- The report. ----

std::string spread(const std::vector<std::size_t>& per_ds, unsigned files, double* deviation) {
    const auto [lo, hi] = std::minmax_element(per_ds.begin(), per_ds.end());
    const double even = static_cast<double>(files) / static_cast<double>(per_ds.size());
    *deviation =
        100.0 * std::max(even - static_cast<double>(*lo), static_cast<double>(*hi) - even) / even;
    return std::to_string(*lo) + " / " + std::to_string(*hi) + " (even " + fmt(even, 1) +
           "; max/min " +
           fmt(static_cast<double>(*hi) / static_cast<double>(std::max<std::size_t>(1, *lo)), 3) +
           ", within " + fmt(*deviation, 1) + "%)";
}

void write_report(const Args& args, const Layout& layout, const Result& few, const Result& many,
                  std::uint64_t relayed) {
    std::ofstream md = bench::output_file(args.out_dir, "many-ds.md");
    md << "### f. " << kManyDs << " data servers beside " << kFewDs << "\n\n"
       << "FLEXFILES over VFS, Mirrors = 1, the same ganesha.nfsd and module; start-up timed "
          "with one MDS running, the rest with both side by side, alternating. The data "
          "servers are "
       << kManyDs + kFewDs << " VFS exports of " << args.processes
       << " Ganesha NFSv3 processes (exports per process:";
    for (unsigned n : layout.exports_per_process)
        md << " " << n;
    md << "); each export is one Data_Server block of the MDS at its own loopback address "
          "(127.S.0.100-163 for the 64, 127.S.0.200-202 for the 3), where a TCP relay in the "
          "benchmark forwards MOUNT and NFS to the process behind it (the MDS refuses two "
          "Data_Server blocks with one Address:NFS_Port). "
       << relayed << " connections relayed.\n\n";
    auto both = [&](const std::string& label, auto value) {
        md << "| " << label << " | " << value(few) << " | " << value(many) << " |\n";
    };
    md << "| | " << kFewDs << " data servers | " << kManyDs << " data servers |\n|---|---:|---:|\n";
    both("start to first answered GETATTR, median of " +
             std::to_string(many.first_answer_s.size()) + " starts (s)",
         [](const Result& r) { return fmt(median(r.first_answer_s), 3); });
    both("start to every data server Up, median (s)",
         [](const Result& r) { return fmt(median(r.all_up_s), 3); });
    both("MDS threads (fleet event threads ff-ds*)", [](const Result& r) {
        return std::to_string(r.idle.threads) + " (" + std::to_string(r.idle.fleet_threads) + ")";
    });
    both("MDS RSS idle after start (MiB)",
         [](const Result& r) { return fmt(r.idle.rss_kib / 1024.0, 1); });
    both("MDS address space, VmSize (MiB)",
         [](const Result& r) { return fmt(r.idle.vm_kib / 1024.0, 0); });
    both("MDS open descriptors", [](const Result& r) { return std::to_string(r.idle.fds); });
    both("idle: NULL probes/s to the data servers",
         [](const Result& r) { return fmt(r.probes_per_s, 1); });
    both("idle: other requests/s to the data servers",
         [](const Result& r) { return fmt(r.requests_per_s, 1); });
    both("idle: MDS CPU (% of one core, " + std::to_string(args.idle_s) + " s)",
         [](const Result& r) { return fmt(r.idle_cpu_pct, 2); });
    both("creates/s (" + std::to_string(args.files) + " files, " + std::to_string(kCreateSessions) +
             " sessions)",
         [](const Result& r) { return fmt(r.creates_per_s()); });
    both("MDS RSS after the creates (MiB)",
         [](const Result& r) { return fmt(r.rss_after_creates_kib / 1024.0, 1); });
    double dev_few = 0, dev_many = 0;
    const std::string s_few = spread(few.per_ds, args.files, &dev_few);
    const std::string s_many = spread(many.per_ds, args.files, &dev_many);
    md << "| data files per data server, min / max | " << s_few << " | " << s_many << " |\n";
    both("LAYOUTGET (PUTFH + LAYOUTGET RW) p50 / p99 / mean (us)", [](const Result& r) {
        return fmt(r.layoutget.pct(0.5)) + " / " + fmt(r.layoutget.pct(0.99)) + " / " +
               fmt(r.layoutget.mean());
    });
    both("GETDEVICEINFO p50 / p99 / mean (us)", [](const Result& r) {
        return fmt(r.getdeviceinfo.pct(0.5)) + " / " + fmt(r.getdeviceinfo.pct(0.99)) + " / " +
               fmt(r.getdeviceinfo.mean());
    });
    both("device ids named by the layouts",
         [](const Result& r) { return std::to_string(r.devices_seen); });

    const double extra = static_cast<double>(kManyDs - kFewDs);
    md << "\nPer added data server (" << kManyDs << " minus " << kFewDs << ", divided by "
       << kManyDs - kFewDs
       << "): " << fmt((static_cast<double>(many.idle.threads) - few.idle.threads) / extra, 2)
       << " threads, "
       << fmt((static_cast<double>(many.idle.rss_kib) - few.idle.rss_kib) / extra, 0)
       << " KiB RSS, "
       << fmt((static_cast<double>(many.idle.vm_kib) - few.idle.vm_kib) / extra / 1024.0, 1)
       << " MiB address space, "
       << fmt(1000 * (median(many.first_answer_s) - median(few.first_answer_s)) / extra, 2)
       << " ms to the first answer, "
       << fmt(1000 * (median(many.all_up_s) - median(few.all_up_s)) / extra, 2) << " ms to all Up, "
       << fmt((many.idle_cpu_pct - few.idle_cpu_pct) / extra, 3) << "% of a core idle.\n"
       << "\nStarts (s), first answer / all Up, in order:";
    for (std::size_t i = 0; i < few.first_answer_s.size(); ++i)
        md << " " << kFewDs << ": " << fmt(few.first_answer_s[i], 3) << "/"
           << fmt(few.all_up_s[i], 3) << ";";
    for (std::size_t i = 0; i < many.first_answer_s.size(); ++i)
        md << " " << kManyDs << ": " << fmt(many.first_answer_s[i], 3) << "/"
           << fmt(many.all_up_s[i], 3) << ";";
    md << "\n\nData files per data server (" << kManyDs << "):";
    for (std::size_t n : many.per_ds)
        md << " " << n;
    md << "\n\n| target (#16) | measured | met |\n|---|---|---|\n"
       << "| files per data server within 10% of even, " << kManyDs << " data servers | "
       << "within " << fmt(dev_many, 1) << "% | " << (dev_many <= 10.0 ? "yes" : "no") << " |\n";
}

int run(const Args& args) {
    progress("starting " + std::to_string(args.processes) + " data-server processes");
    Layout layout = plan_exports(args.processes);
    ClusterOptions options;
    options.data_servers = args.processes;
    options.start_mds = false;
    options.with_dbus = true;
    options.configure_ds = [&layout](ServerOptions& ds, const DataServerInfo& info) {
        // The exports planned for this process (in its folder); the harness's one is dropped.
        const fs::path folder = info.export_path.parent_path();
        ds.exports.clear();
        each_planned(layout, [&](const DataServerInfo& v, unsigned p) {
            if (p != info.index)
                return;
            ExportSpec e;
            e.export_id = v.export_id;
            e.path = folder / v.name;
            e.pseudo = "/" + v.name;
            ds.exports.push_back(e);
        });
    };
    // Declared first, so it outlives the servers whose connections it carries.
    TcpRelay relay;
    Cluster cluster(options);
    fill_addresses(layout, cluster);
    each_planned(layout, [&](const DataServerInfo& v, unsigned p) {
        const std::string& to = cluster.ds_info()[p].address;
        relay.add(v.address, v.nfs_port, to, cluster.ds_info()[p].nfs_port);
        relay.add(v.address, v.mnt_port, to, cluster.ds_info()[p].mnt_port);
    });
    relay.start();

    MdsRun few(cluster, layout.few, kFewMdsHost);
    MdsRun many(cluster, layout.many, kManyMdsHost);
    // Each step alternates the two, the order reversed every other round, so a change in
    // the machine's load hits both alike.
    auto alternate = [&](unsigned rounds, auto step) {
        for (unsigned r = 0; r < rounds; ++r) {
            std::array<MdsRun*, 2> order{&few, &many};
            if (r % 2 == 1)
                std::swap(order[0], order[1]);
            for (MdsRun* m : order)
                step(*m, r);
        }
    };
    // Start-up alone: only the MDS being started runs.
    alternate(args.rounds, [&](MdsRun& m, unsigned r) {
        m.start(true);
        progress("start " + std::to_string(r + 1) + ", " + std::to_string(m.result().data_servers) +
                 " data servers: first answer " + fmt(m.result().first_answer_s.back(), 3) +
                 " s, all Up " + fmt(m.result().all_up_s.back(), 3) + " s");
        m.stop();
    });
    // The rest side by side.
    few.start(false);
    many.start(false);
    progress("both MDSs idle for " + std::to_string(args.idle_s) + " s");
    measure_idle({&few, &many}, args.idle_s);
    progress("creating " + std::to_string(args.files) + " files on each, in " +
             std::to_string(kBatches) + " alternating batches");
    few.create_dirs();
    many.create_dirs();
    alternate(kBatches, [&](MdsRun& m, unsigned r) {
        m.create_files(args.files * r / kBatches, args.files * (r + 1) / kBatches);
    });
    few.count_data_files();
    many.count_data_files();
    progress(std::to_string(args.ops) + " LAYOUTGETs and " + std::to_string(args.ops) +
             " GETDEVICEINFOs on each, in " + std::to_string(kBatches) + " alternating batches");
    alternate(kBatches,
              [&](MdsRun& m, unsigned) { m.layoutgets(args.files, args.ops / kBatches); });
    alternate(kBatches, [&](MdsRun& m, unsigned) { m.getdeviceinfos(args.ops / kBatches); });
    for (MdsRun* m : {&few, &many}) {
        m->close_sessions();
        for (const auto& line : m->mds().error_lines())
            progress(m->mds().name() + " error line: " + line);
        m->stop();
    }
    write_report(args, layout, few.result(), many.result(), relay.connections());
    progress("wrote " + args.out_dir + "/many-ds.md");
    return 0;
}

} // namespace

const char* const bench::kTool = "ff-bench-many-ds";

int main(int argc, char** argv) {
    return bench::main_of(argc, argv, parse_args, run);
}
