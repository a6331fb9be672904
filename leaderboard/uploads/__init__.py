"""The participant's upload flow: the submit form, its validation, the run's live
status, the participant's own runs and what the owner may do to one
(``/benchmarks/<slug>/submit/``, ``/submissions/<id>/status/``, ``/accounts/runs/``,
``/submissions/<id>/edit/``, ``hide/``, ``unhide/``, ``withdraw/``).

- ``forms``: ``SubmissionForm`` (size, name, a first look at the file's head), and the
  owner's ``RunDetailsForm`` and ``ConfirmForm``.
- ``views``: the submit page, a run's live status, the participant's own runs.
- ``receiving``: ``receive_run``, the one path a run takes into the platform (the form
  and the API's submit endpoint both call it, so both refuse the same files for the same
  reasons and share the daily limit), and ``store_run``, which presigned uploads share.
- ``presigned``: presigned uploads straight to the bucket (start, confirm, discard
  expired).
- ``refusals``: the per-user budget of refused uploads (429 once it is spent).
- ``owners``: the owner's edit, hide/unhide and withdraw pages (thin: the model acts).
- ``middleware``: when a request began (before its body arrived), for the phases' grace.
- ``handlers``: the upload handlers (settings' ``FILE_UPLOAD_HANDLERS``): 1 MB pieces, a
  file spooled to disk hashed on one thread and checked (two pieces at a time) as it arrives.

May import ``leaderboard.models``, ``leaderboard.pipeline`` (to queue scoring and comparisons) and the
pages' shortcuts; never the API.
"""
