# Stratos's interruption queue in Terraform (hashicorp/aws provider 5.x): the same queue,
# queue policy and EventBridge rules as interruption-queue.cfn.yaml, the rules' event
# patterns read from patterns/ (test/interruptionsetup keeps both in step). Use it as a
# module:
#
#   module "stratos_interruption" {
#     source     = "./deploy/interruption"
#     queue_name = "stratos-my-cluster"
#   }
#
# then give the operator --interruption-queue=<queue_name> and its role
# deploy/iam/controller-policy-interruption.json for the queue_arn output.

variable "queue_name" {
  description = "Name of the queue, as the operator's --interruption-queue"
  type        = string
  validation {
    condition     = can(regex("^[A-Za-z0-9_-]{1,80}$", var.queue_name))
    error_message = "queue_name must be up to 80 letters, digits, '-' and '_'."
  }
}

locals {
  # Rule key => pattern file.
  interruption_rules = {
    spot-interruption        = "spot-interruption.json"
    rebalance-recommendation = "rebalance-recommendation.json"
    scheduled-change         = "scheduled-change.json"
    instance-state-change    = "instance-state-change.json"
  }
}

resource "aws_sqs_queue" "interruption" {
  name = var.queue_name
  # A notice older than five minutes is past use; a spot warning's is two.
  message_retention_seconds = 300
  sqs_managed_sse_enabled   = true
}

data "aws_iam_policy_document" "interruption_queue" {
  statement {
    sid       = "EventBridgeSendsNotices"
    effect    = "Allow"
    actions   = ["sqs:SendMessage"]
    resources = [aws_sqs_queue.interruption.arn]
    principals {
      type        = "Service"
      identifiers = ["events.amazonaws.com", "sqs.amazonaws.com"]
    }
  }
  statement {
    sid       = "DenyInsecureTransport"
    effect    = "Deny"
    actions   = ["sqs:*"]
    resources = [aws_sqs_queue.interruption.arn]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }
}

resource "aws_sqs_queue_policy" "interruption" {
  queue_url = aws_sqs_queue.interruption.id
  policy    = data.aws_iam_policy_document.interruption_queue.json
}

resource "aws_cloudwatch_event_rule" "interruption" {
  for_each      = local.interruption_rules
  name_prefix   = "stratos-${each.key}-"
  description   = "${each.key} notices for Stratos (${var.queue_name})"
  event_pattern = file("${path.module}/patterns/${each.value}")
}

resource "aws_cloudwatch_event_target" "interruption" {
  for_each  = local.interruption_rules
  rule      = aws_cloudwatch_event_rule.interruption[each.key].name
  target_id = "StratosInterruptionQueue"
  arn       = aws_sqs_queue.interruption.arn
}

output "queue_name" {
  description = "The operator's --interruption-queue (chart value settings.interruptionQueue)"
  value       = aws_sqs_queue.interruption.name
}

output "queue_arn" {
  description = "The queue's ARN, for deploy/iam's INTERRUPTION_QUEUE_ARN"
  value       = aws_sqs_queue.interruption.arn
}

output "queue_url" {
  description = "The queue's URL, which --interruption-queue takes as well"
  value       = aws_sqs_queue.interruption.url
}
