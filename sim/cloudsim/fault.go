package cloudsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mpool-dev/mpool/sim/core"
	"github.com/mpool-dev/mpool/sim/wire/localapi"
)

// newFaultCommand returns `mpool cloud fault`: it sets an instance's health
// fault through a running cloud's admin API.
func newFaultCommand() *cobra.Command {
	var (
		cloudURL, group, face, scope string
		fraction                     float64
	)
	cmd := &cobra.Command{
		Use:   "fault (INSTANCE | --group NAME --fraction F) kubelet-stopped|node-not-ready|never-joins|cloud-check-failing|none",
		Short: "Make instances of a running simulated cloud unhealthy, or healthy again",
		Long: `Set the health fault of an instance of a running simulated cloud (mpool up
or mpool cloud), or of a fraction of a group's instances, through its admin API:

  kubelet-stopped      the kubelet stops heartbeating: the Node's Lease and status
                       are no longer renewed and its conditions go Unknown after the
                       node monitor grace period (--node-monitor-grace-period)
  node-not-ready       the kubelet heartbeats but reports Ready=False (KubeletNotReady)
  never-joins          the instance runs but never joins: no Node (an instance that
                       has not joined yet)
  cloud-check-failing  the instance fails the cloud's own status check (EC2 instance
                       status, Azure application health; the aws, azure and eks faces
                       repair it when their health checks are on); the kubelet is fine
  none                 clear the fault

INSTANCE is an instance ID (i-..., unique for the local and aws faces) or a
providerID; --group names the instance's group instead (an Azure scale set's
instance IDs are ordinals), with --face and --scope for another face's group.
With --fraction, the fault goes to that share of the group's instances, chosen
at random (seeded), and the chosen IDs are printed.`,
		Example: `  mpool cloud fault i-0000002a kubelet-stopped
  mpool cloud fault --group default-pool-1a2b3c --fraction 0.5 node-not-ready
  mpool cloud fault 3 none --group pool --face azure --scope /subscriptions/s/resourceGroups/rg`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			fault, err := core.ParseInstanceFault(args[len(args)-1])
			if err != nil {
				return err
			}
			q := url.Values{}
			if face != "" {
				q.Set("face", face)
			}
			if scope != "" {
				q.Set("scope", scope)
			}
			var path string
			var body any = localapi.InstanceFault{Fault: string(fault)}
			switch {
			case cmd.Flags().Changed("fraction"):
				if len(args) != 1 || group == "" {
					return fmt.Errorf("--fraction takes --group and no instance")
				}
				path = "/admin/groups/" + url.PathEscape(group) + "/instance-faults"
				body = localapi.GroupInstanceFault{Fraction: fraction, Fault: string(fault)}
			case len(args) != 2:
				return fmt.Errorf("name an instance, or a group with --fraction")
			case group != "":
				path = "/admin/groups/" + url.PathEscape(group) + "/instances/" + url.PathEscape(args[0]) + "/fault"
			default:
				path = "/admin/instances/" + url.PathEscape(args[0]) + "/fault"
			}
			u := strings.TrimSuffix(cloudURL, "/") + path
			if len(q) > 0 {
				u += "?" + q.Encode()
			}
			out, err := adminPut(cmd, u, body)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("fraction") {
				var res localapi.GroupInstanceFaultResult
				if err := json.Unmarshal(out, &res); err != nil {
					return fmt.Errorf("reading the cloud's answer: %w", err)
				}
				for _, id := range res.InstanceIDs {
					fmt.Fprintln(cmd.OutOrStdout(), id)
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cloudURL, "url", "http://127.0.0.1:8790", "the simulated cloud's URL (its local face, where /admin is served)")
	f.StringVar(&group, "group", "", "the instance's group (its name in its face)")
	f.StringVar(&face, "face", "", "the group's face (default local)")
	f.StringVar(&scope, "scope", "", "the group's scope in its face (e.g. /subscriptions/s/resourceGroups/rg, aws:<account>:<region>)")
	f.Float64Var(&fraction, "fraction", 0, "give the fault to this share (0 to 1) of the group's instances")
	return cmd
}

// adminPut sends body to an admin endpoint and returns the answer's body,
// or the cloud's error.
func adminPut(cmd *cobra.Command, u string, body any) ([]byte, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(cmd.Context(), http.MethodPut, u, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("calling the simulated cloud: %w", err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		var e localapi.ErrorResponse
		if json.Unmarshal(out, &e) == nil && e.Error.Message != "" {
			return nil, fmt.Errorf("the simulated cloud answered %s: %s", e.Error.Code, e.Error.Message)
		}
		return nil, fmt.Errorf("the simulated cloud answered %s", resp.Status)
	}
	return out, nil
}
