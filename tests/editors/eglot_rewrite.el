;;; eglot_rewrite.el --- batch Emacs/Eglot driver for tests/editors/test_emacs.py  -*- lexical-binding: t -*-

;; Usage: emacs -Q --batch file.py -l tests/editors/eglot_rewrite.el   (env: see eglot_driver.el)
;; Runs `flowedit.rewrite' (mode replace) on the target through `eglot-execute-command', lets the answer
;; stream in until the server's `flowedit/status' ends the rewrite, then runs `flowedit.revert'.
;; A batch Emacs never goes idle, so Eglot's idle timer would never send a didChange (and the server waits
;; for the report of each streamed edit before it sends the next).  While it waits for the stream the
;; driver therefore does what an idle Emacs does a few ms after each change: it runs Eglot's own idle
;; timer.  It does not while `flowedit.revert' is pending, as no Emacs does while a command runs: the
;; server then hears nothing back but Eglot's `applied: t'.
;; Exit: 0 = the driver got through (the test judges the outcome), 1 = it did not.

(load (expand-file-name "eglot_driver.el" (file-name-directory load-file-name)) nil t)

(setq eglot-confirm-server-initiated-edits nil) ; else Eglot asks to confirm every streamed edit

(defun flowedit-be-idle ()
  "Run Eglot's pending didChange idle timer of the buffer, as an idle Emacs would now."
  (let ((timer (buffer-local-value 'eglot--change-idle-timer flowedit-buffer)))
    (when (timerp timer)
      (timer-event-handler timer))))

(defun flowedit-wait-for (what predicate timeout)
  "Let the server's messages in (idle between them) until PREDICATE returns non-nil (its value) or
TIMEOUT s pass (nil)."
  (let ((deadline (+ (float-time) timeout)) value)
    (while (and (not (setq value (funcall predicate))) (< (float-time) deadline))
      ;; returns as soon as the server sends something
      (accept-process-output (jsonrpc--process flowedit-server) (- deadline (float-time)))
      (flowedit-be-idle))
    (or value (progn (flowedit-fail "waited %g s for %s, in vain" timeout what) nil))))

(condition-case err
    (progn
      (flowedit-connect)
      (let* ((id (flowedit-rewrite (flowedit-target-range)))
             (outcome (flowedit-wait-for "the flowedit/status that ends the rewrite"
                                         (lambda () (flowedit-outcome id)) 45)))
        (flowedit-note 'outcome outcome)
        (flowedit-note 'streamed (flowedit-text))
        (flowedit-note 'applied_while_streaming flowedit-applied)
        (flowedit-say "outcome %S, %d edits applied" outcome flowedit-applied)
        (when outcome
          (let ((reported flowedit-did-change))
            (flowedit-revert)
            ;; what Eglot reported while its own request was pending (nothing: not even the revert's edit)
            (flowedit-note 'did_change_during_revert (- flowedit-did-change reported)))
          (flowedit-be-idle))))
  (error (flowedit-fail "%S" err)))
(flowedit-finish)
;;; eglot_rewrite.el ends here
