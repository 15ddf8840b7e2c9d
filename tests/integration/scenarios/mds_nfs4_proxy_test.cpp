// SPDX-License-Identifier: LGPL-3.0-or-later
//
// An NFSv4.1 client that takes no layout, through the MDS's proxy path
// (fsal_flexfiles/mds, file.cpp's open2): OPEN with create places the data files, WRITE
// and READ on the open stateid go to them, OPEN with truncate empties every data file.
//
// Cluster: 1 MDS (FLEXFILES over VFS, Protocols 3 and 4, Mirrors = 2) + 3 NFSv3 data
// servers; the NFSv4.1 client is tools/client (ffclient).
#include "client/file_ops.hpp"
#include "client/session.hpp"
#include "mds_test_support.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>

using namespace mds_test;
using namespace flexfiles::client;

namespace {

std::unique_ptr<Session> open_session(GaneshaServer& mds, std::uint32_t minor) {
    SessionOptions o;
    o.host = mds.address();
    o.port = mds.nfs_port();
    o.minor_version = minor;
    o.exchange_flags = 0; // a plain client: asks for no pNFS role
    return Session::open(o);
}

std::vector<char> as_chars(const std::vector<std::uint8_t>& v) {
    return std::vector<char>(v.begin(), v.end());
}

std::uint64_t fileid_on_mds(GaneshaServer& mds, const std::string& name) {
    struct stat st {};
    EXPECT_EQ(stat((mds.export_path() / name).c_str(), &st), 0) << name;
    return st.st_ino;
}

} // namespace

TEST(MdsNfs4Proxy, OpenCreateWriteReadTruncate) {
    Cluster cluster(flexfiles_cluster(with_mirrors(2)));
    GaneshaServer& mds = cluster.mds();
    auto session = open_session(mds, 1);

    OpenOptions create;
    create.access = OPEN4_SHARE_ACCESS_BOTH;
    create.create = true;
    create.exclusive = true;
    OpenFile f = open_path(*session, "/export1/v4-file", create);
    const std::uint64_t fileid = fileid_on_mds(mds, "v4-file");
    auto placed = data_files_on_disk(cluster, fileid);
    ASSERT_EQ(placed.size(), 2U) << "OPEN with create placed one data file per mirror";
    EXPECT_NE(placed[0].ds, placed[1].ds);

    const auto data = pattern(200 * 1024 + 17, 21);
    write_all(*session, f, 0, as_chars(data));
    EXPECT_EQ(read_all(*session, f), as_chars(data));
    for (const auto& df : placed)
        EXPECT_EQ(read_whole(df.path), data) << df.path;
    EXPECT_EQ(fs::file_size(mds.export_path() / "v4-file"), 0U);
    close_file(*session, f);

    // A second OPEN (no create) reads the same bytes.
    OpenOptions read_only;
    OpenFile again = open_path(*session, "/export1/v4-file", read_only);
    EXPECT_EQ(read_all(*session, again), as_chars(data));
    close_file(*session, again);
    EXPECT_EQ(data_files_on_disk(cluster, fileid).size(), 2U) << "no new data files";

    // OPEN with truncate (UNCHECKED4, size 0) empties every data file.
    OpenOptions truncate;
    truncate.access = OPEN4_SHARE_ACCESS_BOTH;
    truncate.create = true;
    truncate.truncate = true;
    OpenFile t = open_path(*session, "/export1/v4-file", truncate);
    for (const auto& df : placed)
        EXPECT_EQ(fs::file_size(df.path), 0U) << df.path << " was not truncated by the OPEN";
    EXPECT_TRUE(read_all(*session, t).empty());
    const auto small = pattern(3000, 22);
    write_all(*session, t, 0, as_chars(small));
    EXPECT_EQ(read_all(*session, t), as_chars(small));
    close_file(*session, t);

    // NFSv3 REMOVE through the same export: the data files go.
    Nfs3Client v3(mds.nfs3_url());
    EXPECT_EQ(v3.remove(v3.root(), "v4-file").status, Nfs3Status::ok);
    EXPECT_TRUE(data_files_on_disk(cluster, fileid).empty());
    const auto errors = mds.error_lines();
    EXPECT_TRUE(errors.empty()) << "the MDS logged errors:\n" << joined(errors);
}

// Exclusive create of a name that exists fails in the namespace; the existing file and its
// data files are untouched.
TEST(MdsNfs4Proxy, GuardedCreateOfAnExistingNameLeavesItAlone) {
    Cluster cluster(flexfiles_cluster(with_mirrors(2)));
    GaneshaServer& mds = cluster.mds();
    auto session = open_session(mds, 1);
    OpenOptions create;
    create.access = OPEN4_SHARE_ACCESS_BOTH;
    create.create = true;
    create.exclusive = true;
    OpenFile f = open_path(*session, "/export1/only-once", create);
    write_all(*session, f, 0, as_chars(pattern(5000, 1)));
    close_file(*session, f);
    const std::uint64_t fileid = fileid_on_mds(mds, "only-once");
    const auto before = all_data_files(cluster);

    EXPECT_THROW(open_path(*session, "/export1/only-once", create), NfsError);
    EXPECT_EQ(all_data_files(cluster), before);
    OpenFile again = open_path(*session, "/export1/only-once", OpenOptions{});
    EXPECT_EQ(read_all(*session, again), as_chars(pattern(5000, 1)));
    close_file(*session, again);
    EXPECT_EQ(data_files_on_disk(cluster, fileid).size(), 2U);
}

// OPEN with create while fewer than Mirrors data servers are Up: NFS4ERR_DELAY (they may
// come back; NOSPC would reach applications as ENOSPC although nothing is full), the open
// state is released and the namespace object removed again; the session goes on.
TEST(MdsNfs4Proxy, OpenCreateWithTooFewDataServersFailsCleanly) {
    Cluster cluster(flexfiles_cluster(with_mirrors(2)));
    GaneshaServer& mds = cluster.mds();
    auto session = open_session(mds, 1);
    const std::size_t mark = mds.log_offset();
    cluster.ds(0).stop();
    cluster.ds(1).stop();
    ASSERT_TRUE(eventually(
        [&] { return mds.log_contains("ds 2 (", mark) && mds.log_contains("-> Suspect", mark); },
        15s));
    // Both stopped data servers must have been noticed; retry until the refusal says so.
    OpenOptions create;
    create.access = OPEN4_SHARE_ACCESS_BOTH;
    create.create = true;
    std::uint32_t status = 0;
    EXPECT_TRUE(eventually(
        [&] {
            try {
                OpenFile f = open_path(*session, "/export1/nowhere", create);
                close_file(*session, f);
                Nfs3Client v3(mds.nfs3_url());
                v3.remove(v3.root(), "nowhere");
                return false;
            } catch (const NfsError& e) {
                status = e.status();
                return true;
            }
        },
        15s, 200ms));
    EXPECT_EQ(status, static_cast<std::uint32_t>(NFS4ERR_DELAY));
    EXPECT_FALSE(fs::exists(mds.export_path() / "nowhere"));
    EXPECT_TRUE(mds.log_contains("cannot create file \"nowhere\"", mark));
    EXPECT_TRUE(all_data_files(cluster).empty());
    // The session is fine: a file in the export can still be looked up.
    EXPECT_NO_THROW(stat_path(*session, "/export1"));
}

// RENAME over an existing file takes its last link: its data files go; the renamed file
// keeps its own.
TEST(MdsNfs4Proxy, RenameOverAFileRemovesItsDataFiles) {
    Cluster cluster(flexfiles_cluster(with_mirrors(2)));
    GaneshaServer& mds = cluster.mds();
    auto session = open_session(mds, 1);
    OpenOptions create;
    create.access = OPEN4_SHARE_ACCESS_BOTH;
    create.create = true;
    for (const char* name : {"/export1/source", "/export1/target"}) {
        OpenFile f = open_path(*session, name, create);
        write_all(*session, f, 0, as_chars(pattern(4000, name[9])));
        close_file(*session, f);
    }
    const std::uint64_t source = fileid_on_mds(mds, "source");
    const std::uint64_t target = fileid_on_mds(mds, "target");
    ASSERT_EQ(data_files_on_disk(cluster, target).size(), 2U);

    Compound c;
    c.putfh(lookup_path(*session, "/export1")).savefh();
    std::string from = "source", to = "target";
    nfs_argop4 op{};
    op.argop = NFS4_OP_RENAME;
    op.nfs_argop4_u.oprename.oldname.utf8string_len = static_cast<u_int>(from.size());
    op.nfs_argop4_u.oprename.oldname.utf8string_val = from.data();
    op.nfs_argop4_u.oprename.newname.utf8string_len = static_cast<u_int>(to.size());
    op.nfs_argop4_u.oprename.newname.utf8string_val = to.data();
    c.typed(op, "RENAME");
    CompoundResult r = session->send(c);
    ASSERT_TRUE(r.replied()) << r.error;
    ASSERT_EQ(r.status, static_cast<std::uint32_t>(NFS4_OK));

    EXPECT_TRUE(data_files_on_disk(cluster, target).empty())
        << "the replaced file's data files survived the rename";
    EXPECT_EQ(data_files_on_disk(cluster, source).size(), 2U);
    OpenFile renamed = open_path(*session, "/export1/target", OpenOptions{});
    EXPECT_EQ(read_all(*session, renamed), as_chars(pattern(4000, 's')));
    close_file(*session, renamed);
    const auto errors = mds.error_lines();
    EXPECT_TRUE(errors.empty()) << "the MDS logged errors:\n" << joined(errors);
}

// An UNSTABLE WRITE through the MDS stays UNSTABLE on the data servers (no fsync per
// write), and the client's data is still never lost: when a data server restarts before a
// COMMIT (its page cache, and the unstable data with it, could be gone), the COMMIT answers
// with another verifier than the WRITE got, so the client sends its WRITE again. Without a
// restart the verifiers match.
TEST(MdsNfs4Proxy, UnstableWritesAreCommittedAndADataServerRestartMovesTheVerifier) {
    Cluster cluster(flexfiles_cluster(with_mirrors(1)));
    auto session = open_session(cluster.mds(), 1);
    OpenOptions create;
    create.access = OPEN4_SHARE_ACCESS_BOTH;
    create.create = true;
    OpenFile f = open_path(*session, "/export1/unstable", create);
    const auto data = as_chars(pattern(64 * 1024, 5));

    auto write_unstable = [&] {
        Compound c;
        c.putfh(f.fh).write(f.stateid, 0, data, UNSTABLE4);
        CompoundResult r = session->send(c);
        r.check("write");
        EXPECT_EQ(r.write(1).committed, UNSTABLE4) << "the MDS synced an UNSTABLE write";
        return std::vector<char>(std::begin(r.write(1).writeverf), std::end(r.write(1).writeverf));
    };
    // Each NFS4ERR_DELAY is seen here, not retried inside the client.
    auto commit = [&] {
        Compound c;
        c.retry_on_delay(false).putfh(f.fh).commit(0, 0);
        CompoundResult r = session->send(c);
        r.check("commit");
        return std::vector<char>(std::begin(r.commit(1).writeverf),
                                 std::end(r.commit(1).writeverf));
    };
    auto same = [](const std::vector<char>& a, const std::vector<char>& b) { return a == b; };

    const auto written = write_unstable();
    EXPECT_TRUE(same(commit(), written)) << "nothing restarted, yet the verifier moved";

    const auto before_restart = write_unstable();
    const auto placed = data_files_on_disk(cluster, fileid_on_mds(cluster.mds(), "unstable"));
    ASSERT_EQ(placed.size(), 1U);
    // The data server is away for 1.5 s, the way a restart is: longer than the three
    // refused connects the MDS makes in its first few hundred milliseconds take. Until the
    // MDS has reconnected, COMMIT answers NFS4ERR_DELAY (never NFS4ERR_IO, which would fail
    // the application's fsync); a client asks again. (A Ganesha data server's verifier is
    // its start time in seconds, so it comes back with another one.)
    GaneshaServer& ds = cluster.ds(placed[0].ds);
    ds.stop();
    const auto t0 = std::chrono::steady_clock::now();
    unsigned delayed = 0;
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(1500)) {
        try {
            commit();
            FAIL() << "COMMIT succeeded while the data server was stopped";
        } catch (const NfsError& e) {
            ASSERT_EQ(e.status(), static_cast<std::uint32_t>(NFS4ERR_DELAY))
                << "after " << delayed << " DELAYs: " << e.what();
            ++delayed;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_GE(delayed, 5U);
    ds.start();
    std::vector<char> after;
    for (int tries = 1;; ++tries) {
        try {
            after = commit();
            std::cerr << "COMMIT answered after " << tries << " tries, "
                      << std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - t0)
                             .count()
                      << " ms after the stop\n";
            break;
        } catch (const NfsError& e) {
            ASSERT_EQ(e.status(), static_cast<std::uint32_t>(NFS4ERR_DELAY)) << e.what();
            ASSERT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10)) << e.what();
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    EXPECT_FALSE(same(after, before_restart))
        << "a data server restarted between WRITE and COMMIT and the verifier did not move";
    // The client sends its write again; now it holds.
    const auto again = write_unstable();
    EXPECT_TRUE(same(commit(), again));
    EXPECT_EQ(read_all(*session, f), data);
    close_file(*session, f);
}
