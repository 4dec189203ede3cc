package aws

import (
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// launchEndReasons are the state reasons with which EC2 ends an instance right after
// accepting its launch, for a fault of the launch's settings that a relaunch with the
// same settings meets again ("Instance terminates immediately" in EC2's
// troubleshooting guide), with what each means for a node class.
var launchEndReasons = map[string]string{
	// EC2 says no more than this when the instance cannot use the KMS key an encrypted
	// volume needs: the key is disabled, pending deletion, in another account that does
	// not share it, or its key policy does not let EC2 use it on the account's behalf.
	"Client.InternalError":              "an encrypted volume's KMS key cannot be used: it is disabled or pending deletion, or its key policy or grants do not let EC2 use it for the instance's volumes (docs/aws.md, customer-managed KMS keys)",
	"Client.VolumeLimitExceeded":        "the account's EBS volume or storage quota is reached",
	"Client.InvalidSnapshot.NotFound":   "a block device mapping names a snapshot that does not exist",
	"Client.InvalidKMSKey.InvalidState": "the KMS key of an encrypted volume is not enabled",
}

// endedAtLaunch says why EC2 ended inst at launch, as a readable message, or "" when it
// is not terminating or terminated for one of launchEndReasons.
func endedAtLaunch(inst types.Instance) string {
	if inst.State == nil || (inst.State.Name != types.InstanceStateNameShuttingDown && inst.State.Name != types.InstanceStateNameTerminated) {
		return ""
	}
	if inst.StateReason == nil {
		return ""
	}
	code := aws.ToString(inst.StateReason.Code)
	meaning, ok := launchEndReasons[code]
	if !ok {
		return ""
	}
	said := aws.ToString(inst.StateReason.Message)
	if !strings.HasPrefix(said, code) {
		// EC2 writes the code into the message ("Client.InternalError: Client error on
		// launch"); an answer that does not is given it.
		said = code + ": " + said
	}
	return fmt.Sprintf("EC2 ended instance %s at launch (%s): %s", aws.ToString(inst.InstanceId), said, meaning)
}
