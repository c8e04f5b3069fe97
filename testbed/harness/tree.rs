//! Walking an observation's tree in tests and benchmarks.

use itinero_shared::observation::DomNode;

/// Every node of the tree under `node` (itself included), in document order.
pub fn flatten<'a>(node: &'a DomNode, out: &mut Vec<&'a DomNode>) {
    out.push(node);
    for c in &node.children {
        flatten(c, out);
    }
}

/// The indexed or listed element whose fingerprint carries this DOM id.
pub fn find_by_id<'a>(node: &'a DomNode, id: &str) -> Option<&'a DomNode> {
    if node.fingerprint.as_ref().and_then(|f| f.id.as_deref()) == Some(id) {
        return Some(node);
    }
    node.children.iter().find_map(|c| find_by_id(c, id))
}
