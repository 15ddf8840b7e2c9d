// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Active/passive failover of the MDS (docs/failover.md): the active member of a pair is
// killed (SIGKILL) in the middle of client I/O and the standby, configured alike on the
// same storage, takes the address over. Every write the active member acknowledged is
// there afterwards, on both mirrors; the creates it was in the middle of leave no data
// file behind once the standby's reaper ran; the client goes on writing through the
// standby.
//
// Cluster: 1 MDS pair (FLEXFILES over VFS, Protocols 3 and 4, Mirrors = 2) + 3 NFSv3 data
// servers; the client writes small files over NFSv3 (FILE_SYNC), so what was acknowledged
// is exactly what must survive.
#include "failover_support.hpp"
#include "mds_test_support.hpp"

#include <atomic>
#include <csignal>
#include <mutex>
#include <thread>

using namespace mds_test;
using namespace flexfiles::failover_test;

namespace {

constexpr std::size_t kFileSize = 96 * 1024; // two WRITEs per file

std::string file_name(unsigned i) {
    return "f" + std::to_string(i);
}

// Creates and writes f0, f1, ... (FILE_SYNC) until told to stop; a file counts as
// acknowledged once every WRITE of it was answered OK. Through a failover its calls fail
// for a while: it reconnects and starts the file it was on again.
class Writer {
public:
    explicit Writer(std::string url) : url_(std::move(url)), thread_([this] { run(); }) {}
    ~Writer() { stop(); }

    void stop() {
        stop_ = true;
        if (thread_.joinable())
            thread_.join();
    }
    unsigned acknowledged() const { return acknowledged_.load(); }
    unsigned failures() const { return failures_.load(); }
    std::chrono::steady_clock::time_point first_ack_after(std::chrono::steady_clock::time_point t) {
        std::lock_guard lock(mu_);
        for (auto at : acked_at_)
            if (at > t)
                return at;
        return {};
    }

private:
    bool write_one(Nfs3Client& c, unsigned i) {
        const auto created = c.create(c.root(), file_name(i), 0644);
        if (created.status != Nfs3Status::ok || !created.fh)
            return false;
        const auto data = pattern(kFileSize, i);
        for (std::size_t off = 0; off < data.size(); off += 64 * 1024) {
            const std::size_t n = std::min<std::size_t>(64 * 1024, data.size() - off);
            const std::vector<std::uint8_t> part(data.begin() + static_cast<std::ptrdiff_t>(off),
                                                 data.begin() +
                                                     static_cast<std::ptrdiff_t>(off + n));
            const auto w = c.write(*created.fh, off, part, Nfs3Stable::file_sync);
            if (w.status != Nfs3Status::ok || w.count != n)
                return false;
        }
        return true;
    }

    void run() {
        std::unique_ptr<Nfs3Client> c;
        unsigned i = 0;
        while (!stop_) {
            try {
                if (!c)
                    c = std::make_unique<Nfs3Client>(url_, Nfs3Credentials{}, 2s);
                if (write_one(*c, i)) {
                    {
                        std::lock_guard lock(mu_);
                        acked_at_.push_back(std::chrono::steady_clock::now());
                    }
                    acknowledged_ = ++i;
                    continue;
                }
                failures_++;
            } catch (const std::exception&) {
                failures_++;
                c.reset(); // the server went away: mount again
            }
            std::this_thread::sleep_for(100ms);
        }
    }

    const std::string url_;
    std::atomic<bool> stop_{false};
    std::atomic<unsigned> acknowledged_{0};
    std::atomic<unsigned> failures_{0};
    std::mutex mu_;
    std::vector<std::chrono::steady_clock::time_point> acked_at_;
    std::thread thread_;
};

// The MDS fileid of a file: its inode number in the shared export folder.
std::uint64_t fileid_of(const std::string& name) {
    struct stat st {};
    return ::stat((shared_storage() / "export1" / name).c_str(), &st) == 0 ? st.st_ino : 0;
}

// The MDS fileids of the files in the shared export folder.
std::set<std::uint64_t> namespace_fileids() {
    std::set<std::uint64_t> out;
    for (const auto& e : fs::directory_iterator(shared_storage() / "export1")) {
        struct stat st {};
        if (::stat(e.path().c_str(), &st) == 0)
            out.insert(st.st_ino);
    }
    return out;
}

// Data files on the data servers whose MDS file does not exist.
std::vector<std::string> orphans(Cluster& c) {
    const auto live = namespace_fileids();
    std::vector<std::string> out;
    for (unsigned i = 0; i < c.ds_count(); ++i)
        for (const auto& e : fs::directory_iterator(c.ds_info()[i].export_path)) {
            const auto n = flexfiles::fleet::parse_data_file_name(e.path().filename().string());
            if (n && !live.count(n->fileid))
                out.push_back(c.ds_info()[i].name + "/" + e.path().filename().string());
        }
    return out;
}

} // namespace

TEST(MdsFailover, AStandbyOnTheSharedStorageTakesOverAKilledMdsAndNothingAcknowledgedIsLost) {
    ClusterOptions o = flexfiles_cluster();
    const auto base = o.configure_mds;
    o.configure_mds = [base](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
        base(mds, ds);
        make_failover_member(mds);
        mds.lease_lifetime = 10;
        mds.grace_period = 15;
    };
    Cluster cluster(o);
    GaneshaServer& active = cluster.mds();
    ASSERT_EQ(active.export_path(), shared_storage() / "export1");

    Writer writer(active.nfs3_url());
    ASSERT_TRUE(eventually([&] { return writer.acknowledged() >= 20; }, 60s))
        << "the writer made no progress through the active MDS";
    const unsigned before = writer.acknowledged();
    const auto killed_at = std::chrono::steady_clock::now();
    Takeover t = fail_over(active);
    GaneshaServer& standby = *t.standby;
    const unsigned at_kill = before; // acknowledged by the active member (at least)

    ASSERT_TRUE(eventually([&] { return writer.acknowledged() >= before + 20; }, 90s))
        << "the writer made no progress through the standby; its log:\n"
        << joined(standby.log_tail(30));
    // (An answer the active member sent just before it died may be counted just after the
    // kill: the first acknowledgement after the standby was up is the standby's.)
    const auto resumed = writer.first_ack_after(killed_at + t.took);
    writer.stop();
    std::cout << "[ observed ] takeover (kill to the standby answering): " << t.took.count()
              << " ms; kill to the client's next acknowledged file: "
              << std::chrono::duration_cast<std::chrono::milliseconds>(resumed - killed_at).count()
              << " ms; " << writer.failures() << " failed attempts in between" << std::endl;

    // The standby found the store the active member kept, and its reaper removed what the
    // killed creates had begun (the file the writer was on when the kill came may have got
    // its data files on other data servers the second time): every file has exactly its
    // two data files, and no data file is left without its MDS file.
    const unsigned files = writer.acknowledged();
    const auto placed_right = [&] {
        for (unsigned i = 0; i < files; ++i)
            if (data_files_on_disk(cluster, fileid_of(file_name(i))).size() != 2)
                return false;
        return orphans(cluster).empty();
    };
    EXPECT_TRUE(eventually(placed_right, 30s))
        << "orphaned data files: " << joined(orphans(cluster));

    // Everything acknowledged, before and after the kill, reads back through the standby
    // and sits whole on both mirrors.
    Nfs3Client client(standby.nfs3_url());
    for (unsigned i = 0; i < files; ++i) {
        const auto found = client.lookup(client.root(), file_name(i));
        ASSERT_EQ(found.status, Nfs3Status::ok)
            << file_name(i) << (i < at_kill ? " (before the kill)" : "");
        EXPECT_EQ(read_all(client, found.fh, 0, kFileSize), pattern(kFileSize, i)) << file_name(i);
        const auto placed = data_files_on_disk(cluster, fileid_of(file_name(i)));
        ASSERT_EQ(placed.size(), 2u) << file_name(i);
        for (const auto& df : placed)
            EXPECT_EQ(read_whole(df.path), pattern(kFileSize, i)) << df.path;
    }
    EXPECT_EQ(layout_store(standby), shared_storage() / "recovery" / "flexfiles" / "export-1.db");
    EXPECT_TRUE(standby.error_lines().empty()) << joined(standby.error_lines());
}
