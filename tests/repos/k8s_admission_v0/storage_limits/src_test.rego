package k8sstoragelimits

import data.lib.fixtures
import future.keywords

params := {"maxSize": "50Gi", "storageClasses": ["standard", "ssd"]}

check(claim) = results if {
	results := violation with input as fixtures.review(claim, params)
}

test_small_claim_passes if {
	count(check(fixtures.pvc("10Gi", "ssd"))) == 0
}

test_size_at_the_limit_passes if {
	count(check(fixtures.pvc("50Gi", "standard"))) == 0
	count(check(fixtures.pvc("51200Mi", "standard"))) == 0
}

test_oversized_claim_is_refused if {
	check(fixtures.pvc("100Gi", "ssd")) == {{
		"msg": "PersistentVolumeClaim web/data requests 100Gi of storage, more than the maximum of 50Gi",
		"details": {"requested": "100Gi", "max": "50Gi"},
	}}
}

test_decimal_units_are_smaller if {
	# 53G is 53 * 10^9 bytes, less than 50Gi (53.687 * 10^9).
	count(check(fixtures.pvc("53G", "ssd"))) == 0
	count(check(fixtures.pvc("54G", "ssd"))) == 1
}

test_unknown_storage_class if {
	check(fixtures.pvc("1Gi", "nfs")) == {{"msg": `PersistentVolumeClaim web/data uses storage class "nfs"; allowed classes: ssd, standard`}}
}

test_missing_storage_class if {
	claim := json.remove(fixtures.pvc("1Gi", "ssd"), ["spec/storageClassName"])
	results := check(claim)
	count(results) == 1
	r := results[_]
	contains(r.msg, `storage class ""`)
}

test_read_write_many_is_refused if {
	claim := fixtures.merge(fixtures.pvc("1Gi", "ssd"), {"spec": {"accessModes": ["ReadWriteOnce", "ReadWriteMany"]}})
	check(claim) == {{"msg": "PersistentVolumeClaim web/data: access mode ReadWriteMany (position 1) is not supported"}}
}

test_other_kinds_are_ignored if {
	count(check(fixtures.pod([]))) == 0
}
