"""OPA-compatible decision logs: events, drop and mask policies, console output
and batched, compressed uploads to a service (OPA's ``decision_logs`` plugin).

    logger = DecisionLogger.from_config(config["decision_logs"], config.get("services"),
                                        engine_provider=lambda: engine, labels={"app": "x"})
    logger.start()
    logger.log(make_decision_event("authz/allow", input, result, decision_id=...))
    logger.stop(timeout=5)

See docs/decision-logs.md.
"""

from pyrego.plugins.logs.config import DecisionLogConfig, DecisionLogConfigError, ServiceConfig, parse_config
from pyrego.plugins.logs.encode import make_decision_event, rfc3339_nano
from pyrego.plugins.logs.logged import logged_eval
from pyrego.plugins.logs.logger import COUNTERS, DecisionLogger
from pyrego.plugins.logs.mask import MaskError, MaskRule, apply_mask, parse_mask_rules

__all__ = [
    "COUNTERS",
    "DecisionLogConfig",
    "DecisionLogConfigError",
    "DecisionLogger",
    "MaskError",
    "MaskRule",
    "ServiceConfig",
    "apply_mask",
    "logged_eval",
    "make_decision_event",
    "parse_config",
    "parse_mask_rules",
    "rfc3339_nano",
]
