"""The review suite of the evaluation: AI reviews graded against the demo generator's truth.

Read ``qdash/evaluation/README.md`` ("Reviews"). Truth: ``qdash.evaluation.oracle.reviews`` (plain
pymongo + the generator's record); grading: ``grades.py``; modes: ``visible.py`` (the prompts and the
guards, no model).
"""
