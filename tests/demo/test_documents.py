"""Every collection the demo writes round-trips through its pydantic model without losing a field."""

from __future__ import annotations

from qdash.demo import DemoLab
from qdash.demo.writer import DEMO_COLLECTIONS
from qdash.models import DOCUMENT_MODELS


def test_documents_round_trip_through_their_models(demo_lab: DemoLab) -> None:
    models = {model.collection: model for model in DOCUMENT_MODELS}
    assert set(DEMO_COLLECTIONS) <= set(models)
    for collection in DEMO_COLLECTIONS:
        model = models[collection]
        docs = list(demo_lab.db[collection].find({}).limit(400))
        assert docs, collection
        for doc in docs:
            parsed = model.from_mongo(doc)
            dumped = parsed.to_mongo()
            for key, value in doc.items():
                assert dumped[key] == value, (collection, doc["_id"], key)
            assert model.from_mongo(dumped) == parsed
