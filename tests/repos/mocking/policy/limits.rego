# Resource limits per tier, as one object built from ref-head rules:
# data.service.limits == {"cpu": 4, "memory_gb": 8, "request_mb": 50} for gold.
package service

default limits.cpu := 1

limits.cpu := 2 if tier == "silver"

limits.cpu := 4 if tier in {"gold", "platinum"}

limits.memory_gb := data.config.limits[tier].memory_gb

limits.request_mb := data.config.limits[tier].request_mb

# Platinum may burst to twice its CPU allowance.
limits.burst_cpu := limits.cpu * 2 if tier == "platinum"
