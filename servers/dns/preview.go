package dns

import (
	"context"
	"fmt"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// Previews run before a gated tool issues its token and again before it
// redeems one. Each resolves the zone (the allowlist applies), binds the
// token to the zone's id rather than the spelling the caller used, and
// summarizes the target in counts, TTLs and flags only: never a value,
// comment, label or name read from the provider. The refusal that carries
// the token is the one message a model reads while deciding to act, so no
// upstream text may reach it.
//
// A preview also refuses, with the error the call itself would give, a call
// that cannot run (a protected target, the wrong zone mode, a zone file that
// would be refused): a token is issued only for a call that can run.

func (s *Server) previewDeleteZone(ctx context.Context, _ *kernel.Call, in zoneArgs) (kernel.Preview, error) {
	z, err := s.resolveZone(ctx, in.Zone)
	if err != nil {
		return kernel.Preview{}, err
	}
	if z.Protection.Delete {
		return kernel.Preview{}, protectedError(zoneSubject(in.Zone))
	}
	return kernel.Preview{Target: zoneKey(z), Summary: s.zoneCounts(ctx, z)}, nil
}

func (s *Server) previewImport(ctx context.Context, _ *kernel.Call, in importArgs) (kernel.Preview, error) {
	z, err := s.resolveZone(ctx, in.Zone)
	if err != nil {
		return kernel.Preview{}, err
	}
	if z.Mode != ModePrimary {
		return kernel.Preview{}, modeError(in.Zone)
	}
	if err := s.caps.importer.CheckImport(ctx, z, in.Zonefile); err != nil {
		return kernel.Preview{}, mapError(err, subject{what: fmt.Sprintf("zone %q", in.Zone), protection: "change_rrset_protection"})
	}
	lines := strings.Count(strings.TrimRight(in.Zonefile, "\n"), "\n") + 1
	sum := s.zoneCounts(ctx, z) + fmt.Sprintf(" The import replaces all of them with the %d line(s) of the zone file given;"+
		" export_zonefile takes a backup first.", lines)
	return kernel.Preview{Target: zoneKey(z), Summary: sum}, nil
}

func (s *Server) previewZoneProtection(ctx context.Context, _ *kernel.Call, in zoneProtectionArgs) (kernel.Preview, error) {
	z, err := s.resolveZone(ctx, in.Zone)
	if err != nil {
		return kernel.Preview{}, err
	}
	sum := s.zoneCounts(ctx, z) + fmt.Sprintf(" Its delete protection is currently %s; without it, delete_zone can remove the zone.", onOff(z.Protection.Delete))
	return kernel.Preview{Target: zoneKey(z), Summary: sum}, nil
}

func (s *Server) previewNameservers(ctx context.Context, _ *kernel.Call, in nameserversArgs) (kernel.Preview, error) {
	z, err := s.resolveZone(ctx, in.Zone)
	if err != nil {
		return kernel.Preview{}, err
	}
	if z.Mode != ModeSecondary {
		return kernel.Preview{}, modeError(in.Zone)
	}
	sum := fmt.Sprintf("It currently has %d primary nameserver(s); the call sets %d.", len(z.PrimaryNameservers), len(in.PrimaryNameservers))
	return kernel.Preview{Target: zoneKey(z), Summary: sum}, nil
}

// zoneCounts is "It currently holds N record(s) in M RRSet(s), default TTL
// T." The RRSet count is left out when the provider does not give it (a
// secondary zone, an error).
func (s *Server) zoneCounts(ctx context.Context, z Zone) string {
	in := ""
	if z.Mode == ModePrimary {
		list, err := s.p.ListRRSets(ctx, zoneKey(z), ListRRSetsOptions{PerPage: 1})
		if err == nil && list.Pagination.TotalEntries != nil {
			in = fmt.Sprintf(" in %d RRSet(s)", *list.Pagination.TotalEntries)
		}
	}
	return fmt.Sprintf("It currently holds %d record(s)%s, default TTL %d.", z.RecordCount, in, z.TTL)
}

// modeError refuses a call the zone's mode does not allow.
func modeError(zone string) *kernel.Error {
	return kernel.Errorf(kernel.FailedPrecondition, "This operation is not possible for zone %q in its mode (primary or secondary).", zone).WithHint(hintMode)
}

// previewRRSet resolves the zone and reads the RRSet; more completes the
// summary with what the call would do. A call that changes the records
// (guarded is true) is refused while the RRSet is change-protected.
func (s *Server) previewRRSet(ctx context.Context, zone, name, typ string, guarded bool, more string) (kernel.Preview, error) {
	if err := checkRRSet(zone, name, typ); err != nil {
		return kernel.Preview{}, err
	}
	z, err := s.resolveZone(ctx, zone)
	if err != nil {
		return kernel.Preview{}, err
	}
	rs, err := s.p.GetRRSet(ctx, zoneKey(z), name, typ)
	if err != nil {
		return kernel.Preview{}, mapError(err, rrsetSubject(zone, name, typ))
	}
	if guarded && rs.Protection.Change {
		return kernel.Preview{}, protectedError(rrsetSubject(zone, name, typ))
	}
	sum := rrsetCounts(rs, z)
	if more != "" {
		sum += " " + more
	}
	return kernel.Preview{Target: zoneKey(z) + "/" + name + "/" + typ, Summary: sum}, nil
}

// rrsetCounts is "It currently holds 2 record(s), TTL 300." plus the
// protection flag when it is on.
func rrsetCounts(rs RRSet, z Zone) string {
	ttl := fmt.Sprintf("the zone's default TTL %d", z.TTL)
	if rs.TTL != nil {
		ttl = fmt.Sprintf("TTL %d", *rs.TTL)
	}
	sum := fmt.Sprintf("It currently holds %d record(s), %s.", len(rs.Records), ttl)
	if rs.Protection.Change {
		sum += " Its change protection is on."
	}
	return sum
}

func (s *Server) previewDeleteRRSet(ctx context.Context, _ *kernel.Call, in rrsetArgs) (kernel.Preview, error) {
	return s.previewRRSet(ctx, in.Zone, in.Name, in.Type, true, "")
}

func (s *Server) previewSetRecords(ctx context.Context, _ *kernel.Call, in recordsArgs) (kernel.Preview, error) {
	if err := s.noComments(in.Records); err != nil {
		return kernel.Preview{}, err
	}
	return s.previewRRSet(ctx, in.Zone, in.Name, in.Type, true, fmt.Sprintf("The call replaces them with the %d record(s) given.", len(in.Records)))
}

func (s *Server) previewRemoveRecords(ctx context.Context, _ *kernel.Call, in recordsArgs) (kernel.Preview, error) {
	return s.previewRRSet(ctx, in.Zone, in.Name, in.Type, true, fmt.Sprintf("The call removes the %d record(s) given; an RRSet left empty is deleted.", len(in.Records)))
}

func (s *Server) previewRRSetProtection(ctx context.Context, _ *kernel.Call, in rrsetProtectionArgs) (kernel.Preview, error) {
	return s.previewRRSet(ctx, in.Zone, in.Name, in.Type, false, "Without change protection, its records can be changed and it can be deleted.")
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
