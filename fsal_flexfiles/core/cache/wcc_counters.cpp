// SPDX-License-Identifier: LGPL-3.0-or-later
#include "cache/wcc_counters.hpp"

namespace flexfiles::wcc {

WccStats WccCounters::snapshot() const noexcept {
    WccStats s;
    s.ops = get(kOps);
    s.ops_badxdr = get(kOpsBadXdr);
    s.ops_inval = get(kOpsInval);
    s.ops_untrusted = get(kOpsUntrusted);
    s.ops_no_authority = get(kOpsNoAuthority);
    s.ops_no_data_files = get(kOpsNoDataFiles);
    s.ops_fenced = get(kOpsFenced);
    s.entries_applied = get(kEntriesApplied);
    s.entries_empty = get(kEntriesEmpty);
    s.entries_ignored_unmatched = get(kEntriesUnmatched);
    s.entries_ignored_stale = get(kEntriesStale);
    s.entries_ignored_unauthorised = get(kEntriesUnauthorised);
    s.entries_ignored_invalid = get(kEntriesInvalid);
    s.entries_ignored_future_ctime = get(kEntriesFutureCtime);
    s.entries_ignored_stale_mirror = get(kEntriesStaleMirror);
    s.entries_untrusted = get(kEntriesUntrusted);
    s.attrs_unauthorised = get(kAttrsUnauthorised);
    s.credential_mismatches = get(kCredMismatches);
    s.credential_repairs_sent = get(kCredRepairsSent);
    s.credential_repairs_coalesced = get(kCredRepairsCoalesced);
    s.credential_repairs_done = get(kCredRepairsDone);
    s.credential_repairs_failed = get(kCredRepairsFailed);
    s.owners_unknown = get(kOwnersUnknown);
    s.owner_lookups = get(kOwnerLookups);
    s.overlay_cached = get(kOverlayCached);
    s.overlay_fetched = get(kOverlayFetched);
    s.overlay_no_data = get(kOverlayNoData);
    s.overlay_calls = s.overlay_cached + s.overlay_fetched;
    s.fallback_sent = get(kFallbackSent);
    s.fallback_coalesced = get(kFallbackCoalesced);
    s.fallback_timed_out = get(kFallbackTimedOut);
    s.fallback_failed = get(kFallbackFailed);
    s.fallback_applied = get(kFallbackApplied);
    return s;
}

} // namespace flexfiles::wcc
