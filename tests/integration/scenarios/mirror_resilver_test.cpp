// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Mirrors that miss a write (fsal_flexfiles/mds/stale_mirrors.hpp, resilver.hpp): a write
// through the MDS while one mirror's data server is stopped succeeds on the other mirror,
// marks the missing one stale (logged, counted, persisted), reads and layouts avoid it,
// and once its data server is back the resilverer copies the in-sync mirror over it, so
// both data files hold the same bytes again. The marks survive an MDS restart.
//
// The data server is stopped, not frozen: a frozen one would take the held WRITE late
// when it resumes and converge by itself, which would hide whether the copy happened.
//
// Cluster: 1 MDS (FLEXFILES over VFS, Protocols 3 and 4, Mirrors = 2, DS_IO_Timeout = 1 s)
// + 3 NFSv3 data servers; the MDS is driven over NFSv3, layouts over NFSv4.2.
#include "layout_test_support.hpp"
#include "mds_test_support.hpp"

#include <algorithm>
#include <atomic>

using namespace mds_test;
namespace lt = flexfiles::layout_test;

namespace {

void patch(std::vector<std::uint8_t>& file, std::uint64_t offset,
           const std::vector<std::uint8_t>& bytes) {
    if (file.size() < offset + bytes.size())
        file.resize(offset + bytes.size());
    std::copy(bytes.begin(), bytes.end(), file.begin() + static_cast<std::ptrdiff_t>(offset));
}

// A file written through the MDS, its data files by mirror, and the bytes it holds.
struct Mirrored {
    Created file;
    std::vector<DataFileOnDisk> placed; // by mirror
    std::vector<std::uint8_t> bytes;    // what the file holds
};

Mirrored write_mirrored(Cluster& cluster, Nfs3Client& client, const std::string& name) {
    Mirrored out;
    out.file = create_file(client, name);
    out.bytes = pattern(300 * 1024 + 5, 31);
    write_all(client, out.file.fh, 0, out.bytes);
    out.placed = data_files_on_disk(cluster, out.file.fileid);
    std::sort(out.placed.begin(), out.placed.end(),
              [](const DataFileOnDisk& a, const DataFileOnDisk& b) { return a.mirror < b.mirror; });
    return out;
}

// Writes and a size change the stopped mirror misses: patches in the middle and an
// extension past the end. Each succeeds, because the other mirror takes it.
void write_while_a_mirror_is_away(Nfs3Client& client, Mirrored& m) {
    const auto middle = pattern(70000, 32);
    const auto w = client.write(m.file.fh, 100000, middle, Nfs3Stable::file_sync);
    ASSERT_EQ(w.status, Nfs3Status::ok) << "a write one mirror misses still succeeds";
    patch(m.bytes, 100000, middle);
    const auto tail = pattern(9000, 33);
    write_all(client, m.file.fh, m.bytes.size(), tail);
    patch(m.bytes, m.bytes.size(), tail);
}

lt::SessionOptions session_to(GaneshaServer& mds) {
    lt::SessionOptions o;
    o.host = mds.address();
    o.port = mds.nfs_port();
    o.minor_version = 2;
    return o;
}

// Counts the CB_LAYOUTRECALLs the session gets and answers each with `answer` (NFS4_OK
// keeps the layout, NFS4ERR_NOMATCHING_LAYOUT returns it); other callbacks are refused.
void count_layout_recalls(lt::Session& session, std::atomic<int>& recalls, nfsstat4 answer) {
    session.set_callback_handler(
        [&recalls, answer](const nfs_cb_argop4& op, nfs_cb_resop4&) -> nfsstat4 {
            if (op.argop != NFS4_OP_CB_LAYOUTRECALL)
                return NFS4ERR_NOTSUPP;
            ++recalls;
            return answer;
        });
}

} // namespace

// The whole life of a stale mirror. Layouts granted before it went stale are recalled.
// While a client holds an RW layout the resilverer
// waits (the client may write the in-sync mirror behind the MDS's back), which keeps the
// mirror stale with its data server Up: the window in which reads must still avoid it.
// This client keeps its RW layout through recalls: the resilverer only waits here
// (Resilver_Recall_After = 0; the next test has the recall).
TEST(MirrorResilver, AStaleMirrorIsNotReadNorHandedOutAndIsCopiedBackWhenFree) {
    MdsSettings settings = fast_failures();
    settings.extra = "Resilver_Recall_After = 0;";
    Cluster cluster(flexfiles_cluster(settings));
    GaneshaServer& mds = cluster.mds();
    Nfs3Client client(mds.nfs3_url());
    Mirrored m = write_mirrored(cluster, client, "resilvered");
    ASSERT_EQ(m.placed.size(), 2U);
    const unsigned away = m.placed[0].ds;
    auto session = lt::Session::open(session_to(mds));
    std::atomic<int> recalls{0};
    count_layout_recalls(*session, recalls, NFS4_OK);
    lt::OpenFile before = lt::open_path(*session, "/export1/resilvered", {});
    const lt::Layout both =
        lt::must_layoutget(*session, before.fh, before.stateid, LAYOUTIOMODE4_READ);
    ASSERT_EQ(both.mirrors.size(), 2U);
    const auto in_sync_fh = both.mirrors[1][0].fh_vers[0];

    const std::size_t mark = mds.log_offset();
    cluster.ds(away).stop();
    write_while_a_mirror_is_away(client, m);
    EXPECT_TRUE(mds.log_contains("file " + std::to_string(m.file.fileid) +
                                     ": mirror(s) 0 missed a WRITE the other mirror(s) took",
                                 mark));
    EXPECT_EQ(read_whole(m.placed[1].path), m.bytes) << "the in-sync mirror has every byte";
    // The READ layout held since before names the stale mirror: it is recalled, once.
    EXPECT_TRUE(eventually([&] { return recalls.load() > 0; }, 5s)) << "no CB_LAYOUTRECALL";
    lt::close_file(*session, before);
    EXPECT_EQ(recalls.load(), 1);

    lt::OpenOptions rw;
    rw.access = OPEN4_SHARE_ACCESS_BOTH;
    lt::OpenFile held = lt::open_path(*session, "/export1/resilvered", rw);
    const lt::Layout one = lt::must_layoutget(*session, held.fh, held.stateid, LAYOUTIOMODE4_RW);
    ASSERT_EQ(one.mirrors.size(), 1U) << "the stale mirror is not handed out";
    EXPECT_EQ(one.mirrors[0][0].fh_vers[0], in_sync_fh);

    cluster.ds(away).start();
    ASSERT_TRUE(mds_logged_health(cluster, away, {"-> Up"}, mark, 30s));
    // Reads rotate over the Up mirrors: without the mark, every other one would be stale.
    for (int i = 0; i < 6; ++i)
        EXPECT_EQ(read_all(client, m.file.fh, 0, m.bytes.size()), m.bytes) << "read " << i;
    EXPECT_TRUE(eventually(
        [&] { return mds.log_contains("waiting for the file's RW layouts to be returned", mark); },
        10s));
    EXPECT_NE(read_whole(m.placed[0].path), m.bytes) << "copied while an RW layout was out";
    // GETATTR (the RW layout makes the MDS ask the data servers) gives the in-sync size.
    const auto got = client.getattr(m.file.fh);
    ASSERT_EQ(got.status, Nfs3Status::ok);
    EXPECT_EQ(got.attr.size, m.bytes.size());

    lt::close_file(*session, held); // return-on-close: the RW layout goes
    EXPECT_TRUE(eventually([&] { return mds.log_contains("in sync again", mark); }, 30s))
        << "the resilverer never finished";
    EXPECT_TRUE(mds.log_contains("file " + std::to_string(m.file.fileid) + " mirror 0", mark));
    EXPECT_EQ(read_whole(m.placed[0].path), m.bytes) << "the copy holds every byte";
    EXPECT_EQ(read_whole(m.placed[1].path), m.bytes);

    lt::OpenFile after = lt::open_path(*session, "/export1/resilvered", {});
    EXPECT_EQ(
        lt::must_layoutget(*session, after.fh, after.stateid, LAYOUTIOMODE4_READ).mirrors.size(),
        2U)
        << "resilvered, it is handed out again";
    lt::close_file(*session, after);

    // In sync again: a new write reaches both mirrors.
    const auto later = pattern(5000, 34);
    write_all(client, m.file.fh, 10, later);
    patch(m.bytes, 10, later);
    for (const auto& df : m.placed)
        EXPECT_EQ(read_whole(df.path), m.bytes) << df.path;
    const auto errors = mds.error_lines({"-> Down", "nfs3_Errno_verbose"});
    EXPECT_TRUE(errors.empty()) << "the MDS logged errors:\n" << joined(errors);
}

// A client that keeps the file open with an RW layout it no longer writes through: the
// resilverer recalls the layout once it has waited Resilver_Recall_After on it. The client
// answers as one that has dropped the layout already (NFS4ERR_NOMATCHING_LAYOUT, what a
// client that discarded it after a data-server error says), which returns it; the mirror
// is then copied back with the file still open. Only RW layouts are recalled.
TEST(MirrorResilver, AnRwLayoutKeptOutIsRecalledAndTheMirrorResilvered) {
    MdsSettings settings = fast_failures();
    settings.extra = "Resilver_Recall_After = 1000;";
    Cluster cluster(flexfiles_cluster(settings));
    GaneshaServer& mds = cluster.mds();
    Nfs3Client client(mds.nfs3_url());
    Mirrored m = write_mirrored(cluster, client, "kept");
    ASSERT_EQ(m.placed.size(), 2U);
    const unsigned away = m.placed[0].ds;
    auto session = lt::Session::open(session_to(mds));
    std::atomic<int> recalls{0};
    count_layout_recalls(*session, recalls, NFS4ERR_NOMATCHING_LAYOUT);

    const std::size_t mark = mds.log_offset();
    cluster.ds(away).stop();
    write_while_a_mirror_is_away(client, m);
    lt::OpenOptions rw;
    rw.access = OPEN4_SHARE_ACCESS_BOTH;
    lt::OpenFile held = lt::open_path(*session, "/export1/kept", rw);
    ASSERT_EQ(lt::must_layoutget(*session, held.fh, held.stateid, LAYOUTIOMODE4_RW).mirrors.size(),
              1U);
    // A reader's READ layout, granted after the mark, leaves the stale mirror out: the
    // resilverer's recall is not for it.
    auto reader = lt::Session::open(session_to(mds));
    std::atomic<int> reader_recalls{0};
    count_layout_recalls(*reader, reader_recalls, NFS4ERR_NOMATCHING_LAYOUT);
    lt::OpenFile reading = lt::open_path(*reader, "/export1/kept", {});
    ASSERT_EQ(
        lt::must_layoutget(*reader, reading.fh, reading.stateid, LAYOUTIOMODE4_READ).mirrors.size(),
        1U);
    cluster.ds(away).start();
    ASSERT_TRUE(mds_logged_health(cluster, away, {"-> Up"}, mark, 30s));

    EXPECT_TRUE(eventually([&] { return mds.log_contains("in sync again", mark); }, 30s))
        << "the resilverer never finished while the RW layout was kept";
    EXPECT_GE(recalls.load(), 1) << "no CB_LAYOUTRECALL";
    EXPECT_TRUE(mds.log_contains("waiting for the file's RW layouts to be returned; recalled "
                                 "them after",
                                 mark));
    EXPECT_EQ(read_whole(m.placed[0].path), m.bytes) << "the copy holds every byte";
    EXPECT_EQ(read_whole(m.placed[1].path), m.bytes);
    EXPECT_EQ(reader_recalls.load(), 0) << "the reader's READ layout was recalled";
    lt::close_file(*session, held);
    lt::close_file(*reader, reading);
}

TEST(MirrorResilver, StaleMarksSurviveAnMdsRestart) {
    Cluster cluster(flexfiles_cluster(fast_failures()));
    GaneshaServer& mds = cluster.mds();
    Mirrored m;
    {
        Nfs3Client client(mds.nfs3_url());
        m = write_mirrored(cluster, client, "restarted");
        ASSERT_EQ(m.placed.size(), 2U);
        cluster.ds(m.placed[0].ds).stop();
        write_while_a_mirror_is_away(client, m);
    }
    const std::size_t mark = mds.log_offset();
    mds.restart();
    EXPECT_TRUE(
        mds.log_contains("1 mirror(s) missed writes before the restart and are stale", mark));
    cluster.ds(m.placed[0].ds).start();
    Nfs3Client client(mds.nfs3_url());
    // Whatever the resilverer has done by now, reads never see the stale bytes.
    for (int i = 0; i < 4; ++i)
        EXPECT_EQ(read_all(client, m.file.fh, 0, m.bytes.size()), m.bytes) << "read " << i;
    EXPECT_TRUE(eventually([&] { return read_whole(m.placed[0].path) == m.bytes; }, 30s))
        << "the restarted MDS never resilvered the mirror";
    EXPECT_TRUE(eventually([&] { return mds.log_contains("in sync again", mark); }, 10s));
}
